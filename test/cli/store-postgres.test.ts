// `--store postgres://...`: whole runs with the jobs kept in a real PostgreSQL (a database per test),
// against the sandbox over HTTP, and a real reel process killed with kill -9 in the middle. The
// money line: the sandbox's own counts of generations, uploads and speech.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

/** Whether `unshare --pid --fork --mount-proc` works here (root, or user namespaces allowed). */
const canUnshare =
  process.platform === "linux" &&
  spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" }).status === 0;

const sandbox = useSandboxes();
const database = usePostgres();
const reel = useReelProcesses();

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) =>
      `  - id: v${i}\n    source: ./face.png\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n        speech: { voice: 17, text: "line ${i % 3}" }\n`,
  ).join("");
  return `version: 1\nname: promo\ndefaults:\n  model: actor-1\n  resolution: 720p\nvideos:\n${videos}`;
}

/** The database URL with a password (reel_test's), to check it is never shown. */
const PASSWORD = "reel_test";

const env = (s: Sandbox, store: string): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  REEL_STORE: store,
});

async function everyFileText(dir: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && !entry.name.endsWith(".mp4")) {
      text += await readFile(join(entry.parentPath, entry.name), "utf8");
    }
  }
  return text;
}

describe("reel on a PostgreSQL store", () => {
  it("records decisions and a retake from another folder (machine), and a run of the fleet sends the retake once", async (context) => {
    const url = await database(context);
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(2), "face.png": { fixture: "tiny.png" } });
    expect((await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) })).code).toBe(0);
    // A reviewer elsewhere: no manifests, no state file, only the store.
    const elsewhere = await tempDir();
    const review = { ...env(s, url), REEL_REVIEWER: "ana" };
    const approve = await runCli(["approve", "promo/v0"], { cwd: elsewhere, env: review });
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toBe("approved promo/v0\n");
    const retake = await runCli(["retake", "promo/v1", "--note", "too dark"], {
      cwd: elsewhere,
      env: review,
    });
    expect(retake.code, retake.stderr).toBe(0);
    expect(retake.stdout).toMatch(/^queued promo\/v1~2: a retake of promo\/v1 \(seed \d+\)/);
    expect(existsSync(join(elsewhere, ".reel"))).toBe(false);

    const run = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) });
    expect(run.code, run.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(3);
    expect((await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) })).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(3);
    const results = await readResults<{
      id: string;
      status: string;
      decision: string | null;
      note: string | null;
    }>(dir);
    expect(results.map((r) => [r.id, r.status, r.decision, r.note])).toEqual([
      ["v0", "Success", "approved", null],
      ["v1", "Success", "rejected", "too dark"],
      ["v1~2", "Success", null, null],
    ]);
  });

  it("runs, resumes with nothing sent again, and shows the jobs in status; the password is never shown", async (context) => {
    const url = await database(context);
    expect(new URL(url).password).toBe(PASSWORD);
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(4), "face.png": { fixture: "tiny.png" } });

    const first = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr.split("\n")[0]).toMatch(
      /^reel run: store postgres:\/\/reel_test:\*\*\*@127\.0\.0\.1:\d+\/reel_t_\w+ · out out$/,
    );
    expect(s.counters.generationsCreated).toBe(4);
    expect(s.counters.uploadsByHash.size).toBe(1);
    expect(s.counters.speechByInput.size).toBe(3);
    // No jobs in a state file: they are in the database.
    expect((await readResults<{ status: string }>(dir)).map((r) => r.status)).toEqual(
      Array(4).fill("Success"),
    );

    const again = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) });
    expect(again.code, again.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(4);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.duplicateSpeech()).toBe(0);

    const status = await runCli(["status", "--store", url, "--json"], { cwd: dir, env: {} });
    expect(status.code, status.stderr).toBe(0);
    const shown = JSON.parse(status.stdout) as { manifests: unknown; store: string };
    expect(shown.manifests).toEqual({ promo: { Success: 4 } });
    expect(shown.store).toMatch(/^postgres:\/\/reel_test:\*\*\*@/);

    for (const text of [first.stdout, first.stderr, again.stderr, status.stdout, await everyFileText(dir)]) {
      expect(text).not.toContain(`:${PASSWORD}@`);
    }
  });

  it("two runners at once on one store and one account: each job submitted once, the bound held and reached, one output folder filled", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.1 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(12), "face.png": { fixture: "tiny.png" } });
    // Each may run 3 at once: together, still 3 (the account's bound is the smallest of the fleet's).
    const runners = [0, 1].map(() => reel(["run", "promo.yaml", "--concurrency", "3"], dir, env(s, url)));
    const codes = await Promise.all(runners.map((r) => r.exit));
    expect(codes).toEqual([0, 0]);
    expect(s.counters.generationsCreated).toBe(12);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.duplicateSpeech()).toBe(0);
    expect(s.counters.peakUnfinished).toBe(3);
    const results = await readResults<{ id: string; status: string }>(dir);
    expect(results.map((r) => r.status)).toEqual(Array(12).fill("Success"));
    for (const r of results) expect(existsSync(join(dir, "out", "promo", `${r.id}.mp4`))).toBe(true);

    // A third machine's output folder is filled from the tasks made: nothing generated again.
    const elsewhere = await runCli(["run", "promo.yaml", "--out", "out2"], { cwd: dir, env: env(s, url) });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(12);
    for (const r of results) expect(existsSync(join(dir, "out2", "promo", `${r.id}.mp4`))).toBe(true);
  });

  it("a runner paused past its lease (SIGSTOP) is taken over, and stops when it wakes (SIGCONT): nothing paid twice", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.2 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(6), "face.png": { fixture: "tiny.png" } });
    const lease = { ...env(s, url), REEL_LEASE_SECONDS: "1" };
    const paused = reel(["run", "promo.yaml", "--concurrency", "2"], dir, lease);
    // Paused once both answers are recorded: paused between a task made and its answer recorded, its
    // submission would be uncertain (and hold a slot of the bound for 10 minutes), which the chaos
    // test covers (fleet-chaos.test.ts).
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      await until(
        async () =>
          (await db.query("SELECT 1 FROM jobs WHERE state = 'submitted'").catch(() => ({ rowCount: 0 })))
            .rowCount === 2,
        "the first runner to submit two jobs",
      );
    } finally {
      await db.end();
    }
    paused.child.kill("SIGSTOP");
    try {
      const started = Date.now();
      const taker = await runCli(["run", "promo.yaml", "--concurrency", "2", "--out", "out2"], {
        cwd: dir,
        env: lease,
      });
      expect(taker.code, taker.stderr).toBe(0);
      // It waited for the paused runner's lease to end before it took its tasks over.
      expect(Date.now() - started).toBeGreaterThan(1_000);
      expect(taker.stderr).toMatch(
        /runner \d+ on .* \(pid \d+\) was silent past its lease: its work is taken over/,
      );
      const results = await readResults<{ id: string; status: string }>(dir, "out2");
      expect(results.map((r) => r.status)).toEqual(Array(6).fill("Success"));
    } finally {
      paused.child.kill("SIGCONT");
    }
    // Awake, it finds its work taken and stops, saying why, without sending anything more.
    expect(await paused.exit).toBe(3);
    expect(paused.stderr(), paused.stderr()).toMatch(/silent for longer than its lease/);
    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.duplicateSpeech()).toBe(0);
    expect(s.counters.peakUnfinished).toBeLessThanOrEqual(2);
  });

  // Two containers given one host name, each its own PID namespace (two machines alike): the runner
  // started second saw no process under the first one's pid in its namespace, took it for killed,
  // and took it over at once; told it "was silent for longer than its lease", it stopped (exit 3).
  it("two machines with one host name (two PID namespaces): neither runner is taken over while it beats", async (context) => {
    if (!canUnshare) {
      console.warn("skipped: `unshare --pid --fork --mount-proc` is not available to this user");
      return;
    }
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.15 });
    const dir = await tempDir();
    await writeTree(dir, {
      "promo.yaml": manifest(4),
      "other.yaml": manifest(2).replace("name: promo", "name: other").replaceAll("take", "shot"),
      "face.png": { fixture: "tiny.png" },
    });
    const namespace = ["unshare", "--pid", "--fork", "--mount-proc"];
    // The first's pid comes after some forty processes in its namespace; the second is pid 1 in its
    // own, where no such pid exists (its threads take the few after 1).
    const first = reel(["run", "promo.yaml", "--concurrency", "6", "--out", "out1"], dir, env(s, url), [
      ...namespace,
      "sh",
      "-c",
      'for i in $(seq 40); do /bin/true; done; "$@"; exit $?',
      "sh",
    ]);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      await until(
        async () => (await db.query("SELECT 1 FROM runners").catch(() => ({ rowCount: 0 }))).rowCount === 1,
        "the first runner to register",
      );
    } finally {
      await db.end();
    }
    const second = reel(
      ["run", "other.yaml", "--concurrency", "6", "--out", "out2"],
      dir,
      env(s, url),
      namespace,
    );
    const codes = await Promise.all([first.exit, second.exit]);
    const said = `${first.stderr()}\n----\n${second.stderr()}`;
    expect(codes, said).toEqual([0, 0]);
    expect(said).not.toMatch(/silent|taken over/);
    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.peakUnfinished).toBeLessThanOrEqual(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
  });

  it("status lists the runners: a run in progress as running with its pid and the jobs it holds, then stopped", async (context) => {
    const url = await database(context);
    // Tasks of 2.5 s: the run is under way while status is read.
    const s = await sandbox({ timeScale: 0.5 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(2), "face.png": { fixture: "tiny.png" } });
    const running = reel(["run", "promo.yaml", "--concurrency", "3"], dir, env(s, url));
    await until(() => s.counters.generationsCreated > 0, "the runner to submit");
    interface Shown {
      runners: {
        id: number;
        host: string;
        pid: number;
        state: string;
        jobsHeld: number;
        heartbeatAt: string;
      }[];
    }
    const status = async (): Promise<Shown> => {
      const result = await runCli(["status", "--store", url, "--json"], { cwd: dir, env: {} });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Shown;
    };
    const during = await status();
    expect(during.runners).toEqual([
      expect.objectContaining({ pid: running.child.pid, host: hostname(), state: "running" }),
    ]);
    // The job it submits or follows (the tasks take seconds here).
    expect(during.runners[0]!.jobsHeld).toBeGreaterThanOrEqual(1);
    const text = await runCli(["status", "--store", url], { cwd: dir, env: {} });
    expect(text.stdout).toMatch(/^Runners \(1\):\n +host +pid +started +last heartbeat +state +jobs held$/m);
    expect(text.stdout).toMatch(
      new RegExp(` ${running.child.pid!}  .*Z  +[\\d.]+ s ago +running +[12]$`, "m"),
    );

    // Its --concurrency is recorded with it (JSON leaves it out).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ concurrency: number }>("SELECT concurrency FROM runners");
    await client.end();
    expect(rows).toEqual([{ concurrency: 3 }]);

    expect(await running.exit).toBe(0);
    const after = await status();
    expect(after.runners).toEqual([
      expect.objectContaining({ id: during.runners[0]!.id, pid: running.child.pid, state: "stopped" }),
    ]);
  });

  it("after kill -9 in the middle of a run, the rerun pays nothing twice and finishes every job", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(12), "face.png": { fixture: "tiny.png" } });
    const victim = reel(["run", "promo.yaml", "--concurrency", "3"], dir, env(s, url));
    await until(() => s.counters.generationsCreated >= 4, "a few submissions");
    victim.child.kill("SIGKILL");
    await victim.exit;
    const made = s.counters.generationsCreated;

    const rerun = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) });
    // Taken over at once, and said for what it is: killed, not silent.
    expect(rerun.stderr).toMatch(
      /runner \d+ on .* \(pid \d+\) ended without stopping \(no process under its pid on this machine\): its work is taken over/,
    );
    const results = await readResults<{ id: string; status: string }>(dir);
    // A submission caught between its intent and its answer is uncertain, never sent again.
    const uncertain = results.filter((r) => r.status === "uncertain");
    expect(uncertain.length).toBeLessThanOrEqual(3);
    expect(results.filter((r) => r.status === "Success")).toHaveLength(12 - uncertain.length);
    expect(rerun.code).toBe(uncertain.length === 0 ? 0 : 1);
    // Every generation made is one job's: the ones before the kill, and one per job left.
    expect(s.counters.generationsCreated).toBeLessThanOrEqual(12);
    expect(s.counters.generationsCreated).toBeGreaterThanOrEqual(made);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.duplicateSpeech()).toBe(0);
    for (const r of results.filter((x) => x.status === "Success")) {
      expect(existsSync(join(dir, "out", "promo", `${r.id}.mp4`))).toBe(true);
    }
  });
});
