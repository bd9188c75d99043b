// The fleet under chaos: 4 real runner processes on one PostgreSQL store and one sandbox
// of 8 slots, 200 jobs in 4 manifests sharing their 3 source files and 6 speech lines. The runners
// start together and race for the uploads and speech; then a seeded random runner is killed with
// kill -9 at seeded random moments (20 times, restarted each time), and one is paused (SIGSTOP) past
// its lease and woken (SIGCONT); then the fleet finishes. The money line is the sandbox's own
// counts: nothing generated, uploaded or spoken twice, never more tasks unfinished than the bound
// (--concurrency 8 on every runner); every job a whole video or `uncertain`, and uncertain only
// where a kill cut its submission; one more run sends nothing. The seed is printed
// (REEL_CHAOS_SEED=N replays its kills, though not the processes' own timing), and so are the
// figures (kills, uncertain, peak, time).
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runCli, until, useReelProcesses, writeTree, type ReelProcess } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { isServedVideo } from "../helpers/videos.js";

const sandbox = useSandboxes();
const database = usePostgres();
const reel = useReelProcesses();

const SEED = Number(process.env.REEL_CHAOS_SEED ?? 1818);
const RUNNERS = 4;
const BOUND = 8; // --concurrency of every runner, and the sandbox's slots
const MANIFESTS = 4;
const PER_MANIFEST = 50;
const KILLS = 20;
const LEASE_SECONDS = 2;
/**
 * Longer than a task lives (0.5 s of running here, never waiting for a slot while the bound
 * holds): a submission cut by a kill after the service made its task still counts against the
 * bound until that task surely ended.
 */
const HOLD_SECONDS = 3;
const SOURCES = ["face.png", "face.jpg", "face.gif"];
const LINES = 6;

/** mulberry32: a small seeded PRNG. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Manifest `m`: its own prompts (no two jobs send one body), the files and speech shared by all. */
function manifest(m: number): string {
  const videos = Array.from({ length: PER_MANIFEST }, (_, i) => {
    const source = SOURCES[(i + m) % SOURCES.length]!;
    const line = (i + 2 * m) % LINES;
    return `  - id: v${i}\n    source: ./media/${source}\n    chunks:\n      - duration: 5\n        text: "m${m} take ${i}"\n        speech: { voice: 17, text: "shared line ${line}" }\n`;
  }).join("");
  return `version: 1\nname: m${m}\ndefaults:\n  model: actor-1\n  resolution: 720p\nvideos:\n${videos}`;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What a runner held when it was cut off, read from the store while it could write no more. */
interface Cut {
  readonly runner: number | undefined;
  /** Its submissions without an answer: uncertain once taken over. */
  readonly submitting: number;
  /** Jobs not yet final when it was cut off. */
  readonly unfinished: number;
}

describe("a fleet of runners under chaos", () => {
  it("4 runners, 200 jobs, 20 kill -9 and a pause past the lease: nothing paid twice, the bound held, every job done or uncertain where a kill cut it", async (context) => {
    const url = await database(context);
    const started = Date.now();
    const rand = random(SEED);
    console.log(`fleet chaos: seed ${SEED} (REEL_CHAOS_SEED=${SEED} replays the kills)`);
    // Each task runs 0.5 s: the fleet takes some twenty seconds, during which the kills land.
    const s = await sandbox({ slots: BOUND, timeScale: 0.1 });
    const dir = await tempDir();
    const files: Record<string, string | { fixture: string }> = {
      "media/face.png": { fixture: "tiny.png" },
      "media/face.jpg": { fixture: "tiny.jpg" },
      "media/face.gif": { fixture: "tiny.gif" },
    };
    for (let m = 0; m < MANIFESTS; m++) files[`m${m}.yaml`] = manifest(m);
    await writeTree(dir, files);
    const env = {
      REEL_BASE_URL: s.baseUrl,
      REEL_API_KEY: s.apiKey,
      REEL_STORE: url,
      REEL_LEASE_SECONDS: String(LEASE_SECONDS),
      REEL_UNCERTAIN_HOLD_SECONDS: String(HOLD_SECONDS),
    };
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      // Read at any moment, also before the first runner made the schema (nothing held then).
      const query = async <T extends pg.QueryResultRow>(
        sql: string,
        params: unknown[] = [],
      ): Promise<T[]> => {
        try {
          return (await db.query<T>(sql, params)).rows;
        } catch (error) {
          if ((error as { code?: string }).code === "42P01") return [];
          throw error;
        }
      };
      const count = async (sql: string, params: unknown[] = []): Promise<number> =>
        Number((await query<{ n: string }>(sql, params))[0]?.n ?? 0);

      // Every runner runs every manifest (one shared output folder), each starting at another.
      const argv = (slot: number): string[] => [
        "run",
        ...Array.from({ length: MANIFESTS }, (_, m) => `m${(m + slot) % MANIFESTS}.yaml`),
        "--concurrency",
        String(BOUND),
      ];
      const runners: ReelProcess[] = [];
      const exited: (number | null | undefined)[] = [];
      const start = (slot: number): void => {
        const r = reel(argv(slot), dir, env);
        runners[slot] = r;
        exited[slot] = undefined;
        void r.exit.then((code) => {
          if (runners[slot] === r) exited[slot] = code;
        });
      };
      for (let slot = 0; slot < RUNNERS; slot++) start(slot);

      /**
       * Stops the runner (SIGSTOP: it writes nothing more), reads what it holds, waits for
       * `stopped`, then sends `signal` (kill -9, or SIGCONT) and reads again once it is gone: a
       * claim it sent just before the stop may commit late, and is then found uncertain by the
       * takeover though never sent.
       */
      const cut = async (
        r: ReelProcess,
        signal: "SIGKILL" | "SIGCONT",
        stopped: (runner: number | undefined) => Promise<void> = () => Promise.resolve(),
      ): Promise<{ cut: Cut; code: number | null }> => {
        r.child.kill("SIGSTOP");
        await sleep(150);
        const rows = await query<{ id: string }>(
          "SELECT id FROM runners WHERE pid = $1 ORDER BY id DESC LIMIT 1",
          [r.child.pid],
        );
        const runner = rows[0] ? Number(rows[0].id) : undefined;
        const submitting = (): Promise<number> =>
          count(
            "SELECT count(*) AS n FROM jobs WHERE runner_id = $1 AND state IN ('submitting', 'uncertain')",
            [runner ?? -1],
          );
        const before = await submitting();
        const unfinished = await count(
          "SELECT count(*) AS n FROM jobs WHERE state IN ('pending', 'submitting', 'submitted') OR (state = 'Success' AND file IS NULL)",
        );
        await stopped(runner);
        r.child.kill(signal);
        const code = await r.exit;
        await sleep(250);
        return { cut: { runner, submitting: Math.max(before, await submitting()), unfinished }, code };
      };

      // The first kill once the shared files and speech are recorded in the store: a kill that cuts
      // an upload or a speech call is not this test's subject. (By design, the fleet then uploads
      // the file again, no credits, as the service cannot be asked for it by its content; and the
      // speech, perhaps paid for, becomes uncertain with every job that needs it, never made twice.)
      await until(
        async () =>
          (await count("SELECT count(*) AS n FROM assets")) === SOURCES.length &&
          (await count("SELECT count(*) AS n FROM speech WHERE state = 'done'")) === LINES,
        "the shared files and speech",
        30_000,
      );

      const cuts: Cut[] = [];
      // The pause: a runner stopped (SIGSTOP) until the fleet takes it for lost, past its lease,
      // then woken (SIGCONT): it must find its work taken over and stop (exit 3).
      const pauseAfterKill = 5 + Math.floor(rand() * 10);
      let paused: { code: number | null; stderr: string } | undefined;
      let kills = 0;
      while (kills < KILLS || !paused) {
        await sleep(50 + rand() * 300);
        const slot = Math.floor(rand() * RUNNERS);
        const r = runners[slot]!;
        // Ended by itself (its jobs all final): started again, as after a kill.
        if (exited[slot] !== undefined) {
          start(slot);
          continue;
        }
        // To a runner that registered (one still starting would just go on when woken).
        const pause =
          kills >= pauseAfterKill &&
          !paused &&
          (await count("SELECT count(*) AS n FROM runners WHERE pid = $1 AND stopped_at IS NULL", [
            r.child.pid,
          ])) > 0;
        if (pause) {
          const woken = await cut(r, "SIGCONT", async (runner) => {
            await sleep(LEASE_SECONDS * 1_000);
            await until(
              async () =>
                (await count("SELECT count(*) AS n FROM runners WHERE id = $1 AND lost_at IS NOT NULL", [
                  runner,
                ])) > 0,
              `the paused runner ${runner} to be taken over`,
            );
          });
          paused = { code: woken.code, stderr: r.stderr() };
          cuts.push(woken.cut);
          start(slot);
        } else if (kills < KILLS) {
          cuts.push((await cut(r, "SIGKILL")).cut);
          kills++;
          start(slot);
        }
      }
      const chaosMs = Date.now() - started;

      // The fleet finishes: every runner ends by itself (its exit code is checked below, against the
      // uncertain jobs: a runner ends once every job is final, so all of them see the same ones).
      const codes = await Promise.all(runners.map((r) => r.exit));
      // Awake past its lease, it found its work taken over and stopped: exit 3.
      expect(paused.code, paused.stderr).toBe(3);

      // Nothing paid twice; each file uploaded once, each line spoken once; the bound held.
      expect(s.counters.duplicateGenerations()).toBe(0);
      expect(s.counters.duplicateUploads()).toBe(0);
      expect(s.counters.duplicateSpeech()).toBe(0);
      expect(s.counters.uploadsByHash.size).toBe(SOURCES.length);
      expect(s.counters.speechByInput.size).toBe(LINES);
      expect(s.counters.peakUnfinished).toBeLessThanOrEqual(BOUND);

      // Every job: Success with its whole video in the shared folder, or uncertain.
      const jobs = await query<{ id: string; manifest: string; video_id: string; state: string }>(
        "SELECT id, manifest, video_id, state FROM jobs ORDER BY id",
      );
      expect(jobs).toHaveLength(MANIFESTS * PER_MANIFEST);
      const success = jobs.filter((j) => j.state === "Success");
      const uncertain = jobs.filter((j) => j.state === "uncertain");
      expect(jobs.filter((j) => j.state !== "Success" && j.state !== "uncertain")).toEqual([]);
      // Exit 1 with an uncertain job, else 0.
      expect(codes, runners.map((r) => r.stderr()).join("\n---\n")).toEqual(
        runners.map(() => (uncertain.length === 0 ? 0 : 1)),
      );
      for (const j of success) {
        const video = join(dir, "out", j.manifest, `${j.video_id}.mp4`);
        expect(await isServedVideo(video), video).toBe(true);
      }
      // Each generation made is one job's, and every Success job's was made.
      expect(s.counters.generationsCreated).toBeGreaterThanOrEqual(success.length);
      expect(s.counters.generationsCreated).toBeLessThanOrEqual(jobs.length);

      // Uncertain only where a kill (or the pause) cut a submission: its last claim is a cut
      // runner's, and there are no more of them than the submissions the cut runners held then.
      const victims = new Set(cuts.map((c) => c.runner));
      const lastClaims = await query<{ job_id: string; runner_id: string }>(
        "SELECT DISTINCT ON (job_id) job_id, runner_id FROM events WHERE kind = 'submitting' ORDER BY job_id, id DESC",
      );
      const claimedBy = new Map(lastClaims.map((r) => [r.job_id, Number(r.runner_id)]));
      for (const j of uncertain) {
        expect(victims.has(claimedBy.get(j.id)), `${j.manifest}/${j.video_id}: claimed by a cut runner`).toBe(
          true,
        );
      }
      const inFlightAtCuts = cuts.reduce((n, c) => n + c.submitting, 0);
      expect(uncertain.length).toBeLessThanOrEqual(inFlightAtCuts);

      // One more run does nothing: nothing generated, uploaded or spoken.
      const sent = () => ({
        generations: s.counters.requestCount("POST", "/v1/generations"),
        uploads: s.counters.requestCount("POST", "/v1/assets"),
        speech: s.counters.requestCount("POST", "/v1/audios"),
      });
      const before = sent();
      const again = await runCli(argv(0), { cwd: dir, env });
      expect(again.code, again.stderr).toBe(uncertain.length === 0 ? 0 : 1);
      expect(sent()).toEqual(before);

      const duringWork = cuts.filter((c) => c.unfinished > 0).length;
      console.log(
        `fleet chaos (seed ${SEED}): ${kills} kill -9 + 1 pause past the lease (woke with exit ${paused.code}), ${duringWork} of the ${cuts.length} cuts with jobs unfinished; ` +
          `${success.length} Success, ${uncertain.length} uncertain (${inFlightAtCuts} submissions in flight at the cuts); ` +
          `generations ${s.counters.generationsCreated}, duplicates ${s.counters.duplicateGenerations()}/${s.counters.duplicateUploads()}/${s.counters.duplicateSpeech()} (generations/uploads/speech); ` +
          `peak unfinished ${s.counters.peakUnfinished} (bound ${BOUND}); chaos ${(chaosMs / 1_000).toFixed(1)} s, total ${((Date.now() - started) / 1_000).toFixed(1)} s`,
      );
    } finally {
      await db.end();
    }
  }, 180_000);
});
