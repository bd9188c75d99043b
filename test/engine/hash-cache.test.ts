// The file-hash cache: a local file's sha256 is kept in the state file under (path, size, mtime), so a
// rerun over unchanged files reads none of them, and a file edited in place (same name, even the
// same size) is read again, uploaded once and makes new versions of the videos that use it. `run`
// reports the hashing in its --json summary (`hashing: {hashed, cached}`).
import { createHash } from "node:crypto";
import { readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { FIXTURES, runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

// face.png and face-copy.png have one content under two names; face.png and voice.wav are each
// used by two videos, in two manifests.
const A = `version: 1
name: a
videos:
  - id: face
    model: actor-1
    resolution: 720p
    source: ./media/face.png
    chunks:
      - duration: 5
        text: "a presenter waves"
  - id: voice
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a chef tastes the soup"
        audio: ./media/voice.wav
  - id: copy
    model: actor-1
    resolution: 720p
    source: ./media/face-copy.png
    chunks:
      - duration: 5
        text: "the same face under another name"
`;

const B = `version: 1
name: b
videos:
  - id: both
    model: avatar-h1-pro
    resolution: 720p
    source: ./media/face.png
    chunks:
      - duration: 3
        audio: ./media/voice.wav
`;

async function workspace(): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, {
    "a.yaml": A,
    "b.yaml": B,
    "media/face.png": { fixture: "tiny.png" },
    "media/face-copy.png": { fixture: "tiny.png" },
    "media/voice.wav": { fixture: "tiny.wav" },
  });
  // Media made an hour ago, as a user's usually are: a file written moments before a run is read
  // again by the next one (see the last test).
  for (const name of ["face.png", "face-copy.png", "voice.wav"]) await age(join(dir, "media", name), 3600);
  return dir;
}

/** Sets the file's timestamps `seconds` in the past. */
async function age(path: string, seconds: number): Promise<void> {
  const then = new Date(Date.now() - seconds * 1000);
  await utimes(path, then, then);
}

async function sha256Of(path: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(path))
    .digest("hex");
}

/** `reel run a.yaml b.yaml` in-process; its exit code and what the summary says of the hashing. */
async function run(dir: string, s: Sandbox) {
  const result = await runCli(["run", "a.yaml", "b.yaml", "--json"], {
    cwd: dir,
    env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
  });
  const { hashing } = JSON.parse(result.stdout) as { hashing: { hashed: number; cached: number } };
  return { ...result, ...hashing };
}

async function taskIds(dir: string): Promise<Record<string, string>> {
  const rows = await readResults<{ manifest: string; id: string; status: string; taskId: string }>(dir);
  for (const row of rows) expect(row.status, `${row.manifest}/${row.id}`).toBe("Success");
  return Object.fromEntries(rows.map((r) => [`${r.manifest}/${r.id}`, r.taskId]));
}

const uploads = (s: Sandbox): number => s.counters.requestCount("POST", "/v1/assets");

it("hashes each file once, uploads one content under two names once, and a rerun reads and uploads nothing", async () => {
  const s = await sandbox();
  const dir = await workspace();

  const first = await run(dir, s);
  expect(first.code).toBe(0);
  // Three files (face.png is named by two videos but read once), none known yet.
  expect([first.hashed, first.cached]).toEqual([3, 0]);
  // Two contents: the image (under two names) and the audio, each uploaded once.
  expect(uploads(s)).toBe(2);
  expect(s.counters.uploadsByHash.get(await sha256Of(join(FIXTURES, "tiny.png")))).toBe(1);
  expect(s.counters.uploadsByHash.get(await sha256Of(join(FIXTURES, "tiny.wav")))).toBe(1);
  expect(s.counters.generationsCreated).toBe(4);

  const second = await run(dir, s);
  expect(second.code).toBe(0);
  expect(second.stderr).toContain("4 jobs, 4 already done");
  // Every file's hash comes from the state file: none is read again.
  expect([second.hashed, second.cached]).toEqual([0, 3]);
  expect(uploads(s)).toBe(2);
  expect(s.counters.generationsCreated).toBe(4);
});

it("reads an edited file again (same name, same size), uploads it once, and remakes only the videos that use it", async () => {
  const s = await sandbox();
  const dir = await workspace();
  expect((await run(dir, s)).code).toBe(0);
  const before = await taskIds(dir);
  const oldVoiceVideo = await readFile(join(dir, "out", "a", "voice.mp4"));

  // A re-recorded voice: one sample changed, the size and the name kept, so only the mtime tells
  // the cache that the file is not the one it hashed.
  const voice = join(dir, "media", "voice.wav");
  const bytes = await readFile(voice);
  bytes[44 + 200] = bytes[44 + 200]! ^ 0xff; // inside the PCM data, after the 44-byte header
  await writeFile(voice, bytes);
  await age(voice, 1800); // edited a while ago, after the first run
  expect((await stat(voice)).size).toBe(bytes.length);
  const newSha = await sha256Of(voice);
  expect(s.counters.uploadsByHash.has(newSha)).toBe(false);

  const edited = await run(dir, s);
  expect(edited.code).toBe(0);
  expect([edited.hashed, edited.cached]).toEqual([1, 2]);
  expect(uploads(s)).toBe(3);
  expect(s.counters.uploadsByHash.get(newSha)).toBe(1);
  expect(s.counters.duplicateUploads()).toBe(0);
  // The two videos that use the voice are new jobs (their spec names the new content), made once
  // each; the two that do not keep their tasks.
  expect(s.counters.generationsCreated).toBe(6);
  expect(s.counters.duplicateGenerations()).toBe(0);
  const after = await taskIds(dir);
  expect(after["a/face"]).toBe(before["a/face"]);
  expect(after["a/copy"]).toBe(before["a/copy"]);
  expect(after["a/voice"]).not.toBe(before["a/voice"]);
  expect(after["b/both"]).not.toBe(before["b/both"]);
  // The previous result stays on disk beside the new one (the README: "the old result stays").
  const kept = (await readdir(join(dir, "out", "a"))).filter((f) => /^voice\.[0-9a-f]{8}\.mp4$/.test(f));
  expect(kept).toHaveLength(1);
  expect((await readFile(join(dir, "out", "a", kept[0]!))).equals(oldVoiceVideo)).toBe(true);
  expect(
    (await readdir(join(dir, "out", "b"))).filter((f) => /^both\.[0-9a-f]{8}\.mp4$/.test(f)),
  ).toHaveLength(1);

  // And the edited file is cached in its turn.
  const again = await run(dir, s);
  expect(again.code).toBe(0);
  expect([again.hashed, again.cached]).toEqual([0, 3]);
  expect(uploads(s)).toBe(3);
  expect(s.counters.generationsCreated).toBe(6);
});

it("reads again a file replaced by one of the same size with its mtime kept (cp -p, touch -r)", async () => {
  const s = await sandbox();
  const dir = await workspace();
  expect((await run(dir, s)).code).toBe(0);
  const voice = join(dir, "media", "voice.wav");
  const { atime, mtime, size } = await stat(voice);
  const bytes = await readFile(voice);
  bytes[44 + 300] = bytes[44 + 300]! ^ 0xff;
  await writeFile(voice, bytes);
  await utimes(voice, atime, mtime); // as touch -r does: only the ctime tells of the change
  expect((await stat(voice)).size).toBe(size);
  const replaced = await run(dir, s);
  expect(replaced.code).toBe(0);
  expect(replaced.hashed).toBe(1);
  expect(s.counters.uploadsByHash.get(await sha256Of(voice))).toBe(1);
});

it("reads a touched but unchanged file again, and then uploads and generates nothing", async () => {
  const s = await sandbox();
  const dir = await workspace();
  expect((await run(dir, s)).code).toBe(0);
  const before = await taskIds(dir);

  const face = join(dir, "media", "face.png");
  await age(face, 60); // touched, still an hour later than it was

  const touched = await run(dir, s);
  expect(touched.code).toBe(0);
  expect([touched.hashed, touched.cached]).toEqual([1, 2]);
  // Same content, same hash: the asset and every job are the ones already done.
  expect(touched.stderr).toContain("4 jobs, 4 already done");
  expect(uploads(s)).toBe(2);
  expect(s.counters.generationsCreated).toBe(4);
  expect(await taskIds(dir)).toEqual(before);
});

it("reads again on the next run a file written moments before this one: its timestamp could hide an edit", async () => {
  const s = await sandbox();
  const dir = await workspace();
  // Written just now: a same-size edit within the same timestamp tick would keep size and mtime.
  await writeFile(join(dir, "media", "voice.wav"), await readFile(join(FIXTURES, "tiny.wav")));
  expect((await run(dir, s)).code).toBe(0);
  const second = await run(dir, s);
  expect([second.hashed, second.cached]).toEqual([1, 2]);
  expect(uploads(s)).toBe(2); // the same content: read again, not uploaded again

  await age(join(dir, "media", "voice.wav"), 60);
  const third = await run(dir, s);
  expect([third.hashed, third.cached]).toEqual([1, 2]); // its new timestamp: read once more, then cached
  expect([(await run(dir, s)).hashed]).toEqual([0]);
});
