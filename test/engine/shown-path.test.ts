// Paths in messages are shown from the folder reel was started in, which the CLI passes in: the
// engine must not read the process's own folder (a test runner's, a host program's), or it names a
// user's file by a path that means nothing to them.
import { join } from "node:path";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import type { ProgressEvent } from "../../src/engine/progress.js";
import { loadManifests } from "../../src/manifest/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { isInside, shownPath } from "../../src/user-path.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

it("names an uploaded file relative to the cwd it is given, not to the process's folder", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\nvideos:\n  - id: a\n    model: actor-1\n    resolution: 720p\n    source: ./media/face.png\n    chunks:\n      - duration: 5\n        text: "a wave"\n`,
    "media/face.png": { fixture: "tiny.png" },
  });
  expect(process.cwd()).not.toBe(dir);
  const store = StateStore.open(join(dir, ".reel", "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const events: ProgressEvent[] = [];
  try {
    const loaded = await loadManifests(["m.yaml"], { cwd: dir });
    expect(loaded.problems).toEqual([]);
    await runBatch({
      jobs: loaded.manifests[0]!.jobs,
      client,
      store,
      outDir: join(dir, "out"),
      cacheDir: join(dir, ".reel", "cache"),
      httpOrigins: [new URL(s.baseUrl).origin],
      cwd: dir,
      progress: { start() {}, event: (e) => events.push(e), stop() {} },
    });
  } finally {
    await client.close();
    await store.close();
  }
  const uploaded = events.filter((e) => e.stage === "uploaded").map((e) => e.detail);
  expect(uploaded).toHaveLength(1);
  expect(uploaded[0]).toMatch(/^media\/face\.png \(sha256 [0-9a-f]{12}\)$/);
});

it("shows a path inside the cwd relative, the cwd itself as '.', and anything else whole", () => {
  expect(shownPath("/work/p", "/work/p/m.yaml")).toBe("m.yaml");
  expect(shownPath("/work/p", "/work/p")).toBe(".");
  expect(shownPath("/work/p", "/work/other/m.yaml")).toBe("/work/other/m.yaml");
  expect(shownPath("/work/p", "https://example.com/face.png")).toBe("https://example.com/face.png");
  expect(shownPath(undefined, "/work/p/m.yaml")).toBe("/work/p/m.yaml");
  // A folder whose name starts with two dots is inside, not above.
  expect(shownPath("/work/p", "/work/p/..media/face.png")).toBe("..media/face.png");
});

it("counts a folder whose name starts with '..' as inside its parent", () => {
  expect(isInside("/work/p/..media/face.png", "/work/p")).toBe(true);
  expect(isInside("/work/p", "/work/p")).toBe(true);
  expect(isInside("/work/face.png", "/work/p")).toBe(false);
  expect(isInside("/work/p2/face.png", "/work/p")).toBe(false);
});
