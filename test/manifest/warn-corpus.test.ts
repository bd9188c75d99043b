// Valid manifests whose texts YAML reads otherwise than they look. Every file under warn/ loads (no
// problem) and ends with the exact warnings expected, `# warn: LINE:COL CODE message`, and the texts
// its job sends, in order, `# sends: [JSON strings]`: the warning must say what is really sent.
// The texts that must not warn (quoted, prose over lines, a plain `|` block) are below.
import { copyFile, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

const WARN = fileURLToPath(new URL("./warn/", import.meta.url));
const files = (await readdir(WARN)).filter((f) => f.endsWith(".yaml")).sort();

let ws: Workspace;
beforeAll(async () => {
  ws = await makeWorkspace();
});
afterAll(async () => {
  await ws.cleanup();
});

const sentTexts = (loaded: Awaited<ReturnType<typeof loadManifests>>): (string | undefined)[] =>
  loaded.manifests.flatMap((m) => m.jobs.flatMap((job) => job.spec.chunks.map((chunk) => chunk.text)));

describe("warnings corpus", () => {
  it("has files", () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  it.each(files)("%s", async (file) => {
    const text = await readFile(path.join(WARN, file), "utf8");
    const expected = [...text.matchAll(/^# warn: (.*)$/gm)].map((m) => m[1]);
    const sends = JSON.parse(/^# sends: (.*)$/m.exec(text)![1]!) as string[];
    await copyFile(path.join(WARN, file), path.join(ws.dir, file));
    const loaded = await loadManifests([file], { cwd: ws.dir });
    expect(loaded.problems).toEqual([]);
    expect(loaded.warnings.map((w) => `${w.line}:${w.col} ${w.code} ${w.message}`)).toEqual(expected);
    expect(loaded.warnings.every((w) => w.file === file)).toBe(true);
    expect(sentTexts(loaded)).toEqual(sends);
  });
});

const manifest = (chunks: string): string =>
  `version: 1\nname: spring\nvideos:\n  - id: intro\n    model: actor-2\n    resolution: 720p\n    chunks:\n${chunks}`;

describe("texts that read as they look", () => {
  it.each([
    [
      "a quoted text holding #",
      '      - duration: 5\n        text: "Shot #1 of the shop"  # a real comment\n',
      "Shot #1 of the shop",
    ],
    [
      "a # with no space before it",
      "      - duration: 5\n        text: Shot#1 of the shop\n",
      "Shot#1 of the shop",
    ],
    [
      "prose over two lines",
      "      - duration: 5\n        text: smiles warmly\n          and waves at the camera\n",
      "smiles warmly and waves at the camera",
    ],
    [
      "a | block",
      "      - duration: 5\n        text: |\n          She smiles.\n          She waves.\n",
      "She smiles.\nShe waves.\n",
    ],
    [
      "a >- block",
      "      - duration: 5\n        text: >-\n          She smiles\n          and waves.\n",
      "She smiles and waves.",
    ],
    [
      "a comment above the text",
      "      - duration: 5\n        # try sadder next time\n        text: smiles\n",
      "smiles",
    ],
    ["an & inside the text", "      - duration: 5\n        text: salt & pepper\n", "salt & pepper"],
  ])("%s", async (_name, chunks, sent) => {
    await ws.write("ok.yaml", manifest(chunks));
    const loaded = await loadManifests(["ok.yaml"], { cwd: ws.dir });
    expect(loaded.problems).toEqual([]);
    expect(loaded.warnings).toEqual([]);
    expect(sentTexts(loaded)).toEqual([sent]);
  });

  it("an anchor that an alias uses is YAML reuse, not a cut text", async () => {
    await ws.write(
      "ok.yaml",
      manifest(
        "      - duration: 5\n        text: &calm smiles, calm\n      - duration: 5\n        text: *calm\n",
      ),
    );
    const loaded = await loadManifests(["ok.yaml"], { cwd: ws.dir });
    expect(loaded.problems).toEqual([]);
    expect(loaded.warnings).toEqual([]);
    expect(sentTexts(loaded)).toEqual(["smiles, calm", "smiles, calm"]);
  });
});
