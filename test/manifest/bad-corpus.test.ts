// The bad-manifest corpus: every file under bad/ breaks one rule (a per-model rule of docs/service-api.md
// 4.1, a structural rule, YAML safety, or a file check) and ends with the exact problems expected,
// one comment each: `# expect: LINE:COL CODE message`. `<cwd>` stands for the folder reel runs in,
// `<outside>` for the folder the symlink trap points into. Problems must match exactly, in order.
import { copyFile, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

const BAD = fileURLToPath(new URL("./bad/", import.meta.url));
const files = (await readdir(BAD)).filter((f) => f.endsWith(".yaml")).sort();

let ws: Workspace;
beforeAll(async () => {
  ws = await makeWorkspace();
});
afterAll(async () => {
  await ws.cleanup();
});

describe("bad manifests corpus", () => {
  it("has one file per rule", () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
  });

  it.each(files)("%s", async (file) => {
    const text = await readFile(path.join(BAD, file), "utf8");
    const expected = [...text.matchAll(/^# expect: (.*)$/gm)].map((m) => m[1]);
    await copyFile(path.join(BAD, file), path.join(ws.dir, file));
    const { problems, manifests } = await loadManifests([file], { cwd: ws.dir });
    const actual = problems.map(
      (p) =>
        `${p.line}:${p.col} ${p.code} ${p.message.replaceAll(ws.dir, "<cwd>").replaceAll(ws.outside, "<outside>")}`,
    );
    expect(expected.length, `${file} has no '# expect:' line`).toBeGreaterThan(0);
    expect(actual).toEqual(expected);
    expect(problems.every((p) => p.file === file)).toBe(true);
    expect(manifests).toEqual([]);
  });
});
