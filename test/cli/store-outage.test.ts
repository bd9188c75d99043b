// A PostgreSQL that goes away mid-run: real reel processes on a real PostgreSQL
// reached through a TCP proxy the test cuts (every connection reset, new ones dropped) and restores.
// The runner says the store is gone, takes no new work, reconnects, and goes on; past its limit it
// stops with exit 3, and a rerun finishes. The money line: the sandbox's own counts.
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { until, useReelProcesses, writeTree, runCli } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { throughProxy, useTcpProxies } from "../helpers/tcp-proxy.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();
const proxy = useTcpProxies();
const reel = useReelProcesses();

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) =>
      `  - id: v${i}\n    source: ./face.png\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n        speech: { voice: 17, text: "line ${i % 2}" }\n`,
  ).join("");
  return `version: 1\nname: promo\ndefaults:\n  model: actor-1\n  resolution: 720p\nvideos:\n${videos}`;
}

const env = (s: Sandbox, store: string, more: Record<string, string> = {}): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  REEL_STORE: store,
  ...more,
});

/** Runners registered and not stopped, read straight from the database (not through the proxy). */
async function liveRunners(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM runners WHERE stopped_at IS NULL",
    );
    return Number(rows[0]!.n);
  } catch {
    return 0; // not migrated yet
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectPaidOnce(s: Sandbox, generations: number): void {
  expect(s.counters.generationsCreated).toBe(generations);
  expect(s.counters.duplicateGenerations()).toBe(0);
  expect(s.counters.duplicateUploads()).toBe(0);
  expect(s.counters.duplicateSpeech()).toBe(0);
}

describe("a PostgreSQL store that goes away mid-run", () => {
  it("two runners ride out an outage longer than their lease: they say so, reconnect, and finish; nobody is taken over, nothing is paid twice", async (context) => {
    const pgUrl = await database(context);
    const cutter = await proxy({ host: "127.0.0.1", port: Number(new URL(pgUrl).port) });
    const url = throughProxy(pgUrl, cutter);
    // Tasks of 0.75 s: the runners are at work when the store goes, with work left when it is back.
    const s = await sandbox({ timeScale: 0.15 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(8), "face.png": { fixture: "tiny.png" } });
    const fleet = env(s, url, { REEL_LEASE_SECONDS: "1" });
    const runners = [0, 1].map(() => reel(["run", "promo.yaml", "--concurrency", "2"], dir, fleet));
    await until(async () => (await liveRunners(pgUrl)) === 2, "both runners registered", 30_000);
    // Both at work (their engines started), so that both meet the outage.
    await until(
      () => runners.every((r) => /reel: \d+ jobs/.test(r.stderr())),
      "both runners at work",
      30_000,
    );
    await until(() => s.counters.generationsCreated >= 2, "the first submissions");
    cutter.cut();
    const submittedWhenCut = s.counters.generationsCreated;
    // Two leases of silence: every runner's heartbeat is old when the store comes back.
    await sleep(2_000);
    // Nothing new was submitted while no intent could be recorded.
    expect(s.counters.generationsCreated).toBe(submittedWhenCut);
    cutter.restore();
    const codes = await Promise.all(runners.map((r) => r.exit));
    expect(codes, runners.map((r) => r.stderr()).join("\n---\n")).toEqual([0, 0]);
    for (const runner of runners) {
      expect(runner.stderr()).toMatch(/the store does not answer \(.+\): no new work is taken/);
      expect(runner.stderr()).toMatch(/the store answers again after [\d.]+ ?s: work goes on/);
      expect(runner.stderr()).not.toMatch(/silent past its lease|silent for longer than its lease/);
    }
    expectPaidOnce(s, 8);
    expect(s.counters.peakUnfinished).toBeLessThanOrEqual(2);
    const results = await readResults<{ status: string }>(dir);
    expect(results.map((r) => r.status)).toEqual(Array(8).fill("Success"));
  }, 60_000);

  it("stops with exit 3 and a clear message when the store stays gone past the limit; a rerun finishes, paying nothing twice", async (context) => {
    const pgUrl = await database(context);
    const cutter = await proxy({ host: "127.0.0.1", port: Number(new URL(pgUrl).port) });
    const url = throughProxy(pgUrl, cutter);
    const s = await sandbox({ timeScale: 0.1 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(6), "face.png": { fixture: "tiny.png" } });
    const run = reel(
      ["run", "promo.yaml", "--concurrency", "2"],
      dir,
      env(s, url, { REEL_STORE_OUTAGE_SECONDS: "1" }),
    );
    await until(() => s.counters.generationsCreated >= 1, "the first submission");
    cutter.cut();
    expect(await run.exit, run.stderr()).toBe(3);
    expect(run.stderr()).toMatch(
      /reel run: the store postgres:\/\/reel_test:\*\*\*@127\.0\.0\.1:\d+\/reel_t_\w+ has not answered for 1 s \(.+\): reel stops here/,
    );
    expect(run.stderr()).not.toContain(":reel_test@");
    expect(run.stderr()).not.toMatch(/\n\s+at /); // no stack trace

    cutter.restore();
    const again = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s, url) });
    // Every job done, or uncertain where a submission's answer could not be recorded.
    const results = await readResults<{ status: string }>(dir);
    const uncertain = results.filter((r) => r.status === "uncertain").length;
    expect(again.code, again.stderr).toBe(uncertain === 0 ? 0 : 1);
    expect(results.filter((r) => r.status !== "uncertain").map((r) => r.status)).toEqual(
      Array(6 - uncertain).fill("Success"),
    );
    expect(uncertain).toBeLessThanOrEqual(2);
    // An uncertain job's intent was recorded, its request perhaps not sent: at most once each.
    expect(s.counters.generationsCreated).toBeGreaterThanOrEqual(6 - uncertain);
    expect(s.counters.generationsCreated).toBeLessThanOrEqual(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.duplicateSpeech()).toBe(0);
  }, 60_000);
});

/** Ends every session of the test's database but `admin`'s own: how many. */
async function endSessions(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ ended: boolean }>(
    "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()",
  );
  return rows.filter((row) => row.ended).length;
}

describe("a PostgreSQL store whose sessions are ended (pg_terminate_backend, a server restart)", () => {
  it("a runner whose sessions are ended as a statement finishes, again and again, does not crash: it finishes every job, nothing sent twice", async (context) => {
    const pgUrl = await database(context);
    const proxied = await proxy({ host: "127.0.0.1", port: Number(new URL(pgUrl).port) });
    const s = await sandbox({ timeScale: 0.1 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(16), "face.png": { fixture: "tiny.png" } });
    const run = reel(
      ["run", "promo.yaml", "--concurrency", "4"],
      dir,
      env(s, throughProxy(pgUrl, proxied), { REEL_LEASE_SECONDS: "2" }),
    );
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    let exited = false;
    void run.exit.then(() => (exited = true));
    let rounds = 0;
    try {
      await until(() => /reel: \d+ jobs/.test(run.stderr()) || exited, "the runner at work", 30_000);
      // The moment that matters: the server ends a session just as a statement's answer arrives, and
      // the runner reads both at once (as a busy process does) while other statements wait for the
      // connection. Each round holds the runner's answers back for a moment, ends its sessions, and
      // delivers each connection's answers and end together.
      while (!exited && rounds < 20) {
        rounds++;
        proxied.hold();
        await sleep(30);
        const ended = await endSessions(admin);
        await until(() => proxied.closedWhileHeld >= ended || exited, "the ended sessions closed", 5_000);
        proxied.release();
        await sleep(100);
      }
    } finally {
      proxied.release();
      await admin.end();
    }
    const code = await run.exit;
    expect(run.stderr()).not.toMatch(/Unhandled 'error' event|internal error|\n\s+at /);
    expect(code, run.stderr()).toBe(0);
    expect(rounds).toBeGreaterThanOrEqual(3);
    expectPaidOnce(s, 16);
    const results = await readResults<{ status: string }>(dir);
    expect(results.map((r) => r.status)).toEqual(Array(16).fill("Success"));
  }, 60_000);
});

/** The advisory lock key reel's migrations take (src/state/pg/migrate.ts). */
const MIGRATION_LOCK = 0x7265656c;

describe("a PostgreSQL store that goes away while a runner starts", () => {
  it("a store that does not answer at start is waited for, said once, and the run goes on when it answers", async (context) => {
    const pgUrl = await database(context);
    const cutter = await proxy({ host: "127.0.0.1", port: Number(new URL(pgUrl).port) });
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(3), "face.png": { fixture: "tiny.png" } });
    cutter.cut();
    const run = reel(["run", "promo.yaml"], dir, env(s, throughProxy(pgUrl, cutter)));
    let exited = false;
    void run.exit.then(() => (exited = true));
    await until(() => /does not answer/.test(run.stderr()) || exited, "the runner waiting for the store");
    cutter.restore();
    const code = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(run.stderr()).toMatch(
      /the store does not answer \(.+\): .*tries again until it does, for up to 5 min/,
    );
    expect(run.stderr()).toMatch(/the store answers again after [\d.]+ ?s/);
    expect(run.stderr()).not.toMatch(/Check the URL|\n\s+at /);
    expectPaidOnce(s, 3);
  });

  it("a session ended during the migration is ridden out by a runner; a reader says so in one line (exit 2)", async (context) => {
    // Empty: a start on a current schema takes no migration lock, so there would be no migration.
    const pgUrl = await database(context, { empty: true });
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(3), "face.png": { fixture: "tiny.png" } });
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    // Ends the session of the one reel waiting for the migration lock the test holds.
    const endMigrating = async (): Promise<void> => {
      const waiting = async () =>
        (
          await admin.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pg_advisory_lock%'",
          )
        ).rows;
      await until(async () => (await waiting()).length === 1, "reel waiting to migrate");
      const [{ pid }] = (await waiting()) as [{ pid: number }];
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    };
    try {
      await admin.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      const status = reel(["status"], dir, env(s, pgUrl));
      await endMigrating();
      expect(await status.exit, status.stderr()).toBe(2);
      expect(status.stderr()).toMatch(
        /^reel status: the store postgres:\/\/reel_test:\*\*\*@[^ ]+ does not answer \(terminating connection due to administrator command\)/,
      );
      expect(status.stderr().trim().split("\n")).toHaveLength(1);

      const run = reel(["run", "promo.yaml"], dir, env(s, pgUrl));
      await endMigrating();
      await admin.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
      expect(await run.exit, run.stderr()).toBe(0);
      expect(run.stderr()).toMatch(/the store answers again after/);
      expect(run.stderr()).not.toMatch(/internal error|\n\s+at /);
      expectPaidOnce(s, 3);
    } finally {
      await admin.end();
    }
  });

  it("a store unreachable at start for longer than the limit: one clear line, exit 3, nothing sent", async (context) => {
    const pgUrl = await database(context);
    const cutter = await proxy({ host: "127.0.0.1", port: Number(new URL(pgUrl).port) });
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest(2), "face.png": { fixture: "tiny.png" } });
    cutter.cut();
    const result = await runCli(["run", "promo.yaml"], {
      cwd: dir,
      env: env(s, throughProxy(pgUrl, cutter), { REEL_STORE_OUTAGE_SECONDS: "1" }),
    });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(
      /reel run: the store postgres:\/\/reel_test:\*\*\*@127\.0\.0\.1:\d+\/reel_t_\w+ has not answered for 1 s \(.+\)/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at |reel_test:reel_test/);
    expect(s.counters.generationsCreated + s.counters.uploadsByHash.size).toBe(0);
  });
});
