// A run keeps its manifests' jobs until it ends: they must hold what they say and no more. A value
// the YAML parser returns can share its file's characters, and then one prompt kept the whole text of
// its manifest alive (comments, every other video) for the length of the run.
// Real files loaded as `reel run` loads a folder (the built code, in a process of its own: a heap
// snapshot of the test worker's heap, shared with the files before it, would take seconds on a busy
// machine); the heap measured after a full collection.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const MANIFEST_MODULE = fileURLToPath(new URL("../../dist/manifest/index.js", import.meta.url));

/**
 * Loads `files` in `dir` in a fresh process and says the heap its jobs hold once every garbage is
 * collected, and the 1,234th job. A heap snapshot's collection, as a plain gc() leaves V8's caches
 * (regular expressions' last texts and results) holding the files' texts.
 */
const LOADER = `
import { getHeapSnapshot } from "node:v8";
const { loadManifests } = await import(process.argv[1]);
const files = JSON.parse(process.argv[2]);
async function liveHeap() {
  for await (const _ of getHeapSnapshot());
  return process.memoryUsage().heapUsed;
}
let manifests = (await loadManifests(files, { cwd: process.cwd() })).manifests;
const holding = await liveHeap();
const jobs = manifests.flatMap((m) => m.jobs);
const count = jobs.length;
const job = { key: jobs[1234].key, chunks: jobs[1234].spec.chunks };
manifests = undefined;
jobs.length = 0;
const held = holding - (await liveHeap());
process.stdout.write(JSON.stringify({ held, count, job }));
`;

it("holds the jobs of 11 MB of manifests in a small part of their size, every prompt as written", async () => {
  const FILES = 12;
  const VIDEOS = 150;
  // A long note above each video: most of each file, and none of it sent.
  const note = `    # ${"notes for the editor about this take; ".repeat(160)}\n`;
  const manifest = (name: string): string =>
    `version: 1\nname: ${name}\ndefaults: { model: actor-2 }\nvideos:\n` +
    Array.from(
      { length: VIDEOS },
      (_, i) =>
        `  - id: spring-collection-take-${i}\n${note}    chunks:\n` +
        `      - duration: 5\n        text: "a presenter walks through the spring collection, take ${i}"\n` +
        `        speech: { voice: 17, text: "Welcome to the spring collection, number ${i}." }\n`,
    ).join("");
  const dir = await tempDir();
  const texts = Object.fromEntries(
    Array.from({ length: FILES }, (_, k) => [`part-${k}.yaml`, manifest(`part-${k}`)]),
  );
  const size = Object.values(texts).reduce((sum, text) => sum + text.length, 0);
  await writeTree(dir, texts);

  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--input-type=module", "-e", LOADER, MANIFEST_MODULE, JSON.stringify(Object.keys(texts))],
    { cwd: dir, maxBuffer: 1 << 20 },
  );
  const { held, count, job } = JSON.parse(stdout) as {
    held: number;
    count: number;
    job: { key: string; chunks: unknown };
  };
  expect(count).toBe(FILES * VIDEOS);
  expect(job.key).toBe("part-8/spring-collection-take-34");
  expect(job.chunks).toEqual([
    {
      duration: 5,
      text: "a presenter walks through the spring collection, take 34",
      audio: { kind: "speech", voiceId: "17", text: "Welcome to the spring collection, number 34." },
    },
  ]);

  expect(size).toBeGreaterThan(11_000_000);
  // The files' texts kept by the jobs: over 11 MB. The 1,800 jobs alone: about a kilobyte each.
  expect(held).toBeLessThan(3_000_000);
});
