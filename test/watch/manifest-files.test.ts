// One folder means the same manifests to `run` and to `watch`: an editor's leftover named like a
// manifest (`#draft.yaml`, `draft.yaml~`, `.draft.yaml`) is skipped by both, so neither pays for
// a draft's videos. A file named on the command line is read whatever its name.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { isManifestFile } from "../../src/manifest/index.js";
import { runCli, startCli, until, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const manifest = (name: string) =>
  `version: 1\nname: ${name}\nvideos:\n  - id: v0\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: "${name}"\n`;

const LEFTOVERS = {
  "incoming/#draft.yaml": manifest("hash-draft"),
  "incoming/draft.yaml~": manifest("tilde-draft"),
  "incoming/.draft.yaml": manifest("hidden-draft"),
};

it("names manifests by one rule: *.yaml / *.yml, not hidden, not an editor's #name or name~", () => {
  expect(["a.yaml", "dir/b.YML", "c.yml"].every(isManifestFile)).toBe(true);
  expect(["#a.yaml", ".a.yaml", "a.yaml~", "dir/#a.yml", "a.yaml.tmp", "a.json"].some(isManifestFile)).toBe(
    false,
  );
});

it("run: a folder's editor leftovers are not run; a leftover named on the command line is", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "incoming/real.yaml": manifest("real"), ...LEFTOVERS });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const run = await runCli(["run", "incoming"], { cwd: dir, env });
  expect(run.code).toBe(0);
  expect(existsSync(join(dir, "out", "real", "v0.mp4"))).toBe(true);
  expect(existsSync(join(dir, "out", "hash-draft"))).toBe(false);
  expect(s.counters.generationsCreated).toBe(1);
  // Named by the user, it is theirs to run.
  const named = await runCli(["run", "incoming/#draft.yaml"], { cwd: dir, env });
  expect(named.code).toBe(0);
  expect(existsSync(join(dir, "out", "hash-draft", "v0.mp4"))).toBe(true);
  expect(s.counters.generationsCreated).toBe(2);
});

it("watch: a folder's editor leftovers are not run, present at the start or landing later", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "incoming/real.yaml": manifest("real"), ...LEFTOVERS });
  const w = startCli(["watch", "incoming", "--settle", "200ms"], {
    cwd: dir,
    env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
  });
  try {
    await until(() => existsSync(join(dir, "out", "real", "v0.mp4")), "the real manifest's video");
    await writeFile(join(dir, "incoming", "#later.yaml"), manifest("hash-later"));
    await writeFile(join(dir, "incoming", "after.yaml"), manifest("after"));
    await until(() => existsSync(join(dir, "out", "after", "v0.mp4")), "the later manifest's video");
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    const stopped = await w.stop();
    expect(stopped.code).toBe(0);
  }
  expect(s.counters.generationsCreated).toBe(2);
  expect(existsSync(join(dir, "out", "hash-draft"))).toBe(false);
  expect(existsSync(join(dir, "out", "hash-later"))).toBe(false);
});
