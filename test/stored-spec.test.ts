// A job's stored spec read back: what the engine's polls, the budget, the job's record, the report
// and the exports take of it, from the spec as reel stores it and from one an earlier reel wrote.
import { expect, it } from "vitest";
import { newJobOf } from "../src/engine/engine.js";
import { loadManifests } from "../src/manifest/index.js";
import { readStoredSpec } from "../src/stored-spec.js";
import { writeTree } from "./helpers/cli.js";
import { tempDir } from "./helpers/temp-dir.js";

it("reads the seed, format, source and speech of a spec as reel stores it", async () => {
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1
name: m
videos:
  - id: a
    model: avatar-h1
    resolution: 720p
    aspectRatio: "9:16"
    seed: 7
    source: ./face.png
    chunks:
      - { duration: 5, speech: { voice: 17, text: "Hello there" } }
      - { duration: 5, speech: { voice: 17, text: "Goodbye" } }
`,
    "face.png": { fixture: "tiny.png" },
  });
  const { manifests, problems } = await loadManifests(["m.yaml"], { cwd: dir });
  expect(problems).toEqual([]);
  const stored = newJobOf(manifests[0]!.jobs[0]!).specJson;

  const spec = readStoredSpec(stored);
  expect(spec).toMatchObject({ seed: 7, resolution: "720p", aspectRatio: "9:16" });
  expect(spec.speech).toEqual([
    { voiceId: "17", text: "Hello there" },
    { voiceId: "17", text: "Goodbye" },
  ]);
  expect(spec.spoken).toEqual(["Hello there", "Goodbye"]);
  expect(spec.chunks).toHaveLength(2);
  expect(spec.source).toBeDefined();
  expect(spec.sent).toEqual(JSON.parse(stored));
});

it("reads a spec an earlier reel wrote, or one that cannot be read, as one without those fields", () => {
  const earlier = readStoredSpec(JSON.stringify({ model: "actor-1", seed: "7", chunks: { duration: 5 } }));
  expect(earlier).toMatchObject({ seed: undefined, resolution: undefined, aspectRatio: undefined });
  expect(earlier.chunks).toEqual([]);
  expect(earlier.speech).toEqual([]);
  const unreadable = readStoredSpec("{cut");
  expect(unreadable.sent).toEqual({});
  expect(unreadable.speech).toEqual([]);
});
