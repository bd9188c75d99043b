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

it("an unknown command gets the command meant", async () => {
  const result = await runCli(["rn", "one.yaml"], { cwd: await tempDir() });
  expect(result.code).toBe(2);
  expect(result.stderr).toBe(
    "reel: unknown command 'rn'; did you mean 'run'? Run 'reel --help' for the list.\n",
  );
  const far = await runCli(["frobnicate"], { cwd: await tempDir() });
  expect(far.stderr).toBe("reel: unknown command 'frobnicate'. Run 'reel --help' for the list.\n");
});

it("a manifest path that names nothing gets the file meant, folder or name mistyped", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "manifests/broll.yaml": "version: 1\nvideos: []\n" });
  const name = await runCli(["validate", "manifests/brol.yaml"], { cwd: dir });
  expect(name.code).toBe(2);
  expect(name.stderr).toContain(
    "manifests/brol.yaml: no such file or folder; did you mean manifests/broll.yaml?",
  );
  const folder = await runCli(["validate", "manifest/broll.yaml"], { cwd: dir });
  expect(folder.stderr).toContain("did you mean manifests/broll.yaml?");
  const nothing = await runCli(["validate", "manifests/zzz.yaml"], { cwd: dir });
  expect(nothing.stderr).toContain("manifests/zzz.yaml: no such file or folder\n");
});

it("a mistyped model in prices.yaml gets the model meant; a guess between two is not made", async () => {
  const dir = await tempDir();
  await writeTree(dir, {
    "one.yaml":
      "version: 1\nname: one\nvideos:\n  - id: a\n    model: actor-2\n    resolution: 720p\n    chunks: [{ duration: 5, text: hi }]\n",
    "prices.yaml": "version: 1\nvideo:\n  actor2: 1\n  actor-3: 1\n",
  });
  const result = await runCli(["plan", "one.yaml"], { cwd: dir });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('prices.yaml:3:3: unknown model "actor2"; did you mean "actor-2"?');
  expect(result.stderr).toMatch(/prices\.yaml:4:3: unknown model "actor-3": the models are /);
});
