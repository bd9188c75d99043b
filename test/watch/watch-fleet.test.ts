// Several `reel watch` (real processes) on one shared folder, one PostgreSQL store and one sandbox
//: every manifest that lands is seen by each watcher, and each of its jobs is generated
// once, its shared file uploaded once and its speech made once; the watchers stop cleanly on SIGINT.
import { existsSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { isServedVideo } from "../helpers/videos.js";

const sandbox = useSandboxes();
const database = usePostgres();
const reel = useReelProcesses();

const WATCHERS = 3;
const MANIFESTS = 5;
const PER_MANIFEST = 6;

function manifest(m: number): string {
  const videos = Array.from(
    { length: PER_MANIFEST },
    (_, i) =>
      `  - id: v${i}\n    source: ./media/face.png\n    chunks:\n      - duration: 5\n        text: "w${m} take ${i}"\n        speech: { voice: 17, text: "line ${i % 2}" }\n`,
  ).join("");
  return `version: 1\nname: w${m}\ndefaults:\n  model: actor-1\n  resolution: 720p\nvideos:\n${videos}`;
}

describe("reel watch in a fleet", () => {
  it("several watchers of one folder and one store run each new manifest's jobs once, and stop cleanly on SIGINT", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "incoming/media/face.png": { fixture: "tiny.png" } });
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, REEL_STORE: url };
    const watchers = Array.from({ length: WATCHERS }, () =>
      reel(["watch", "incoming", "--settle", "200ms", "--concurrency", "4"], dir, env),
    );
    await until(
      () => watchers.every((w) => w.stderr().includes("watching")),
      "the watchers to be ready",
      30_000,
    );

    // Manifests land two ways: written in place, and written aside then renamed in; some at once.
    await writeFile(join(dir, "incoming", "w0.yaml"), manifest(0));
    await writeFile(join(dir, "incoming", "w1.yaml"), manifest(1));
    await new Promise((r) => setTimeout(r, 300));
    for (let m = 2; m < MANIFESTS; m++) {
      await writeFile(join(dir, `w${m}.yaml.part`), manifest(m));
      await rename(join(dir, `w${m}.yaml.part`), join(dir, "incoming", `w${m}.yaml`));
    }
    const videos = Array.from({ length: MANIFESTS * PER_MANIFEST }, (_, n) =>
      join(dir, "out", `w${Math.floor(n / PER_MANIFEST)}`, `v${n % PER_MANIFEST}.mp4`),
    );
    await until(() => videos.every((v) => existsSync(v)), "every video", 60_000);

    // Each watcher stops cleanly on Ctrl-C, having finished what it held.
    for (const w of watchers) w.child.kill("SIGINT");
    const codes = await Promise.all(watchers.map((w) => w.exit));
    expect(codes, watchers.map((w) => w.stderr()).join("\n----\n")).toEqual(Array(WATCHERS).fill(0));

    expect(s.counters.generationsCreated).toBe(MANIFESTS * PER_MANIFEST);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.duplicateSpeech()).toBe(0);
    expect(s.counters.uploadsByHash.size).toBe(1);
    expect(s.counters.speechByInput.size).toBe(2);
    expect(s.counters.peakUnfinished).toBeLessThanOrEqual(4);
    for (const v of videos) expect(await isServedVideo(v), v).toBe(true);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows: jobs } = await db.query<{ state: string; attempts: number; file: string | null }>(
        "SELECT state, attempts, file FROM jobs",
      );
      expect(jobs).toHaveLength(MANIFESTS * PER_MANIFEST);
      for (const job of jobs)
        expect(job).toEqual({ state: "Success", attempts: 1, file: expect.any(String) });
      // Every watcher recorded its stop (none was taken for lost).
      const { rows: runners } = await db.query<{ stopped: boolean; lost: boolean }>(
        "SELECT stopped_at IS NOT NULL AS stopped, lost_at IS NOT NULL AS lost FROM runners",
      );
      expect(runners).toEqual(Array(WATCHERS).fill({ stopped: true, lost: false }));
    } finally {
      await db.end();
    }
  }, 90_000);
});
