// The output folder under attack, against the sandbox over real HTTP with real files and disks: a
// folder that refuses writes, a second reel writing into it, a disk that fills up, a video cut
// short or replaced after it was saved. Nothing may be paid for in vain, and nothing the user holds
// may be destroyed.
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, readdir, readFile, truncate, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, spawnReel, useCommands, until, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
// After temp-dir: its mounts are undone before the temp folders are removed.
import { makeReadOnly, mountSmallDisk } from "../helpers/disks.js";
import { expectServedVideo } from "../helpers/videos.js";

const sandbox = useSandboxes();
// Stopped after each test, before the sandboxes close.
const startCommand = useCommands();

/** `count` text-only videos in a manifest named `name`; `source` adds an image (an upload) to each. */
function manifest(name: string, count: number, source?: string): string {
  const videos = Array.from(
    { length: count },
    (_, i) =>
      `  - id: v${i}\n${source ? `    source: ${source}\n` : ""}    chunks:\n      - duration: 5\n        text: "take ${i} of ${name}"\n`,
  ).join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

function env(s: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, ...extra };
}

const costedCalls = (s: Sandbox): number =>
  s.counters.requestCount("POST", "/v1/generations") +
  s.counters.requestCount("POST", "/v1/assets") +
  s.counters.requestCount("POST", "/v1/audios");

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

describe("an output folder that cannot be written", () => {
  it("is refused before anything is paid for: exit 2, a clear message, no upload and no generation", async (ctx) => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", 2, "./face.png"), "face.png": { fixture: "tiny.png" } });
    const folder = join(dir, "out", "m");
    await mkdir(folder, { recursive: true });
    const cannot = makeReadOnly(folder);
    if (cannot) ctx.skip(cannot);

    const result = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`cannot write into the output folder ${folder} (`);
    expect(result.stderr).toContain("nothing was sent");
    expect(costedCalls(s)).toBe(0);
    expect(s.counters.generationsCreated).toBe(0);
  });

  it("in watch, skips that manifest with the message before paying for it, and runs the others", async (ctx) => {
    const s = await sandbox();
    const dir = await tempDir();
    await mkdir(join(dir, "incoming"));
    const folder = join(dir, "out", "locked");
    await mkdir(folder, { recursive: true });
    const cannot = makeReadOnly(folder);
    if (cannot) ctx.skip(cannot);

    const w = startCommand(["watch", "incoming", "--settle", "200ms"], { cwd: dir, env: env(s) });
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "locked.yaml"), manifest("locked", 2));
    await writeFile(join(dir, "incoming", "open.yaml"), manifest("open", 1));
    await until(() => existsSync(join(dir, "out", "open", "v0.mp4")), "the other manifest's video");
    await until(
      () => w.output().stderr.includes(`cannot write into the output folder ${folder}`),
      "the message",
    );
    const result = await w.stop();
    expect(result.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(1);
  });
});

describe("two reels with two state files on one output folder", () => {
  it("refuses the second before it sends anything, and the first completes its download", async () => {
    // Every download is cut in half and answered after 150 ms: the first reel's partial download
    // stays in the output folder for seconds, resumed piece by piece.
    const s = await sandbox({
      faults: { routes: ["GET /files/:token"], latencyMs: 150, rateTruncateDownload: 1 },
    });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", 1) });
    const first = spawnReel(["run", "m.yaml", "--state", "a/state.db"], { cwd: dir, env: env(s) });
    const children = [first];
    let firstErr = "";
    first.stderr.on("data", (d: Buffer) => (firstErr += d.toString()));
    first.stdout.resume();
    const firstExit = new Promise<number | null>((resolve) => first.on("exit", resolve));
    try {
      const folder = join(dir, "out", "m");
      await until(
        async () => (await readdir(folder).catch(() => [])).some((n) => n.endsWith(".part")),
        "the first reel's partial download",
        40_000,
      );
      const second = spawnReel(["run", "m.yaml", "--state", "b/state.db"], { cwd: dir, env: env(s) });
      children.push(second);
      let secondErr = "";
      second.stderr.on("data", (d: Buffer) => (secondErr += d.toString()));
      second.stdout.resume();
      const secondCode = await new Promise<number | null>((resolve) => second.on("exit", resolve));
      expect(secondCode, secondErr).toBe(2);
      expect(secondErr).toContain("another reel process is writing into the output folder");

      expect(await firstExit, firstErr).toBe(0);
      expect(firstErr).not.toContain("ENOENT");
      expect(s.counters.generationsCreated).toBe(1);
      await expectServedVideo(join(folder, "v0.mp4"));
    } finally {
      for (const child of children) child.kill("SIGKILL");
    }
  }, 90_000);
});

describe("a full disk under the output folder", () => {
  it("stops the run at once (exit 3, nothing lost); after freeing space the rerun completes, nothing paid twice, no error left", async (ctx) => {
    const s = await sandbox();
    const dir = await tempDir();
    const jobs = 12;
    await writeTree(dir, { "m.yaml": manifest("m", jobs) });
    const out = join(dir, "out");
    await mkdir(out);
    // About four videos (8 KB each, with their records) fit.
    const grow = mountSmallDisk(out, "48k");
    if (typeof grow === "string") ctx.skip(grow);

    const started = Date.now();
    const full = await runCli(["run", "m.yaml", "--concurrency", "12"], { cwd: dir, env: env(s) });
    expect(full.code, full.stderr).toBe(3);
    expect(full.stderr).toContain("the disk is full (ENOSPC: no space left on device)");
    expect(full.stderr).toContain("Free some space");
    expect(full.stderr).not.toContain("download failed");
    // No retries of a transfer that cannot be saved (they took 10 tries per video).
    expect(Date.now() - started).toBeLessThan(15_000);
    const paid = s.counters.generationsCreated;
    expect(paid).toBeGreaterThan(0);

    (grow as (size: string) => void)("4m");
    const rerun = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(jobs);
    expect(s.counters.duplicateGenerations()).toBe(0);
    const results = await readResults(dir);
    expect(results.map((r) => [r.status, r.error])).toEqual(Array(jobs).fill(["Success", null]));
    for (let i = 0; i < jobs; i++) {
      const record = JSON.parse(await readFile(join(out, "m", `v${i}.json`), "utf8")) as { error: unknown };
      expect(record.error).toBeNull();
    }
  }, 60_000);
});

describe("a full disk under a watcher's output folder", () => {
  it("ends the watch at once with exit 3 and the message, instead of failing every video", async (ctx) => {
    const s = await sandbox();
    const dir = await tempDir();
    await mkdir(join(dir, "incoming"));
    const out = join(dir, "out");
    await mkdir(out);
    const grow = mountSmallDisk(out, "48k");
    if (typeof grow === "string") ctx.skip(grow);

    const w = startCommand(["watch", "incoming", "--settle", "200ms"], { cwd: dir, env: env(s) });
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "m.yaml"), manifest("m", 12));
    const code = await Promise.race([w.exited, sleep(30_000).then(() => "still watching")]);
    if (code === "still watching") await w.stop();
    expect(code).toBe(3);
    expect(w.output().stderr).toContain("the disk is full (ENOSPC: no space left on device)");
    expect(w.output().stderr).not.toContain("download failed");
  }, 60_000);
});

describe("an error recorded for a video saved whole", () => {
  it("is cleared by the next run, in the state, results.jsonl and the record", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", 1) });
    expect((await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    // What an earlier reel left when the video was saved and its record then met a full disk.
    const db = new Database(join(dir, ".reel", "state.db"));
    db.prepare("UPDATE jobs SET error = 'download failed: ENOSPC: no space left on device'").run();
    db.close();

    const rerun = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).not.toContain("ENOSPC");
    expect((await readResults(dir)).map((r) => r.error)).toEqual([null]);
    const record = JSON.parse(await readFile(join(dir, "out", "m", "v0.json"), "utf8")) as { error: unknown };
    expect(record.error).toBeNull();
    expect(s.counters.generationsCreated).toBe(1);
  });
});

describe("a saved video that changed on disk", () => {
  it("is fetched again from its task when cut short or replaced, keeping the user's file; a touched one is not", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("lost", 4) });
    expect((await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const folder = join(dir, "out", "lost");
    const original = await readFile(join(folder, "v1.mp4"));

    // v1: cut short (`head -c 100`). v2: same size, one byte changed, its mtime put back. v3: touched.
    await truncate(join(folder, "v1.mp4"), 100);
    const cut = original.subarray(0, 100);
    const v2 = join(folder, "v2.mp4");
    const before = statSync(v2);
    const edited = Buffer.from(await readFile(v2));
    edited.writeUInt8(edited.readUInt8(edited.length - 1) ^ 0xff, edited.length - 1);
    await writeFile(v2, edited);
    await utimes(v2, before.atime, before.mtime);
    await utimes(join(folder, "v3.mp4"), new Date(), new Date(Date.now() - 3_600_000));
    const downloads = s.counters.requestCount("GET", "/files/:token");

    const rerun = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(4); // never generated again
    expect(s.counters.requestCount("GET", "/files/:token") - downloads).toBe(2); // v1 and v2 only
    // Each record says what its video holds.
    for (const id of ["v0", "v1", "v2", "v3"]) {
      expect((await readFile(join(folder, `${id}.mp4`))).equals(original), id).toBe(true);
      const json = JSON.parse(await readFile(join(folder, `${id}.json`), "utf8")) as Record<string, unknown>;
      expect([json.size, json.sha256]).toEqual([original.length, sha256(original)]);
    }
    // The user's files are kept under the naming of old versions, by the hash of their content.
    expect((await readFile(join(folder, `v1.${sha256(cut).slice(0, 8)}.mp4`))).equals(cut)).toBe(true);
    expect((await readFile(join(folder, `v2.${sha256(edited).slice(0, 8)}.mp4`))).equals(edited)).toBe(true);
    expect(rerun.stderr).toContain(`lost/v1.mp4 is not the video reel saved`);

    // The touched video was read once to tell; its new stamp is recorded, so a rerun reads nothing.
    const db = new Database(join(dir, ".reel", "state.db"), { readonly: true });
    const stamp = db.prepare("SELECT file_stamp FROM jobs WHERE video_id = 'v3'").pluck().get() as string;
    db.close();
    const now = statSync(join(folder, "v3.mp4"), { bigint: true });
    expect(stamp).toBe(`${now.mtimeNs}:${now.ctimeNs}:${now.ino}`);
    const third = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(third.code).toBe(0);
    expect(third.stderr).toContain("4 already done");
    expect(s.counters.requestCount("GET", "/files/:token") - downloads).toBe(2);
  });
});
