// "Did you mean" measures a mistyped option as a mistyped manifest field is measured: two swapped
// neighbours are one slip, so a short option typed with a swap is still recognised.
import { expect, it } from "vitest";
import { editDistance } from "../../src/edit-distance.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

it("names the option meant when two letters of a short one are swapped", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "one.yaml": "version: 1\nvideos: []\n" });
  const result = await runCli(["run", "--sandbox", "--jsno", "one.yaml"], { cwd: dir });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("reel run: unknown option --jsno; did you mean --json?");
});

it("counts a swap of neighbours as one edit, and ignores case", () => {
  expect(editDistance("jsno", "json")).toBe(1);
  expect(editDistance("resolutoin", "resolution")).toBe(1);
  expect(editDistance("Model", "model")).toBe(0);
  expect(editDistance("concurency", "concurrency")).toBe(1);
  expect(editDistance("", "out")).toBe(3);
});
