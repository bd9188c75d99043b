// The PostgreSQL job store (src/state/pg/store.ts) on a real server, a fresh database per test: the
// behaviours of the SQLite state file that matter most (test/state/conformance.ts), and what a shared
// store adds: two stores on one database racing for the same claims, each claim won once.
import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ClaimLostError, StateFileError } from "../../src/errors/state.js";
import type { NewJob } from "../../src/state/job-store.js";
import { openBudget } from "../../src/budget/index.js";
import { readBack } from "../../src/events/read-back.js";
import { openBudgetStore } from "../../src/state/open-job-store.js";
import { DEFAULT_LEASE, leaseTimingOf } from "../../src/state/pg/lease.js";
import { type OpenPgStoreOptions, PgStore } from "../../src/state/pg/store.js";
import { usePostgres } from "../helpers/postgres.js";
import { JOB, seedJob, submittedRecord } from "../helpers/seed-jobs.js";

const database = usePostgres();

const job = (n: number): NewJob => ({ ...JOB, key: `m/v${n}`, videoId: `v${n}` });

// Closed after each test (before usePostgres drops its database: after-hooks run last-registered first).
const opened: PgStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/** A writer of `url`: a runner of its own. These tests race several on one database, as a fleet does. */
async function open(url: string, baseUrl = "https://a.example", options: Partial<OpenPgStoreOptions> = {}) {
  const store = await PgStore.open(url, { baseUrl, ...options });
  opened.push(store);
  return store;
}

/** Rows of the database, read directly: what another reader of the store sees. */
async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe("the PostgreSQL store", () => {
  it("keeps jobs and assets per service address, and a reopened store sees what was written", async (context) => {
    const url = await database(context);
    const a = await open(url, "https://a.example");
    await a.recordAsset("sha-1", "101", 10);
    const row = await seedJob(a, JOB);
    await a.close();
    const b = await open(url, "https://b.example");
    expect(await b.findAsset("sha-1")).toBeUndefined();
    expect(await b.findJob("m/a", "h1")).toBeUndefined();
    expect(await b.listJobs()).toEqual([]);
    // Another spelling of the same address is the same service.
    const again = await open(url, "HTTPS://A.example:443/");
    expect(await again.findAsset("sha-1")).toBe("101");
    expect(await again.findJob("m/a", "h1")).toMatchObject({ id: row.id, state: "pending" });
    expect(await query(url, "SELECT base_url FROM services ORDER BY id")).toEqual([
      { base_url: "https://a.example" },
      { base_url: "https://b.example" },
    ]);
    // A reader of a service the store never saw creates nothing and sees nothing of the others.
    const reader = await open(url, "https://c.example", { readonly: true });
    expect(await reader.listJobs()).toEqual([]);
    expect(reader.journalScope).toBeUndefined();
    expect(await query(url, "SELECT count(*)::int AS n FROM services")).toEqual([{ n: 2 }]);
  });

  it("opens a reviewer as no runner of the fleet, only on a service the store knows", async (context) => {
    const url = await database(context);
    const runner = await open(url, "https://a.example");
    await seedJob(runner, JOB);
    const reviewer = await open(url, "https://a.example", { review: true });
    expect(reviewer.fleet).toBeUndefined();
    expect(reviewer.journalScope).toBeUndefined();
    await reviewer.recordDecisions([{ key: "m/a", specHash: "h1", decision: "approved", reviewer: "ana" }]);
    // One runner: the run's. `reel status` lists no reviewer among the fleet.
    expect(await query(url, "SELECT count(*)::int AS n FROM runners")).toEqual([{ n: 1 }]);
    await expect(open(url, "https://b.example", { review: true })).rejects.toThrow(
      /has no jobs of https:\/\/b\.example/,
    );
    expect(await query(url, "SELECT count(*)::int AS n FROM services")).toEqual([{ n: 1 }]);
  });

  it("numbers two retakes of one video made at the same moment by two reviewers one after the other", async (context) => {
    const url = await database(context);
    const runner = await open(url);
    await runner.upsertJobs(
      [1, 2].map((n) => ({ ...JOB, key: `m/a~${n}`, videoId: `a~${n}`, specHash: `h${n}` })),
    );
    const reviewers = await Promise.all(
      [1, 2, 3].map(() => open(url, "https://a.example", { review: true })),
    );
    const next = (video: {
      jobs: readonly { video_id: string }[];
      retakes: readonly { videoId: string }[];
    }) => {
      const n =
        1 +
        Math.max(
          ...[...video.jobs.map((j) => j.video_id), ...video.retakes.map((r) => r.videoId)].map((id) =>
            Number(id.split("~")[1]),
          ),
        );
      return { ...JOB, key: `m/a~${n}`, videoId: `a~${n}`, specHash: `h${n}` };
    };
    const made = await Promise.all(
      reviewers.map((reviewer, i) =>
        reviewer.queueRetake({ from: { key: "m/a~1", specHash: "h1" }, reviewer: `r${i}`, plan: next }),
      ),
    );
    expect(made.map((retake) => retake.key).sort()).toEqual(["m/a~3", "m/a~4", "m/a~5"]);
    expect(await query(url, "SELECT count(*)::int AS n FROM jobs WHERE state = 'pending'")).toEqual([
      { n: 5 },
    ]);
  });

  it("upserts a job once, returns heads in the order asked, and numbers as numbers", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const first = await seedJob(store, JOB);
    const second = await seedJob(store, { ...JOB, specJson: '{"other":1}' });
    expect(second).toEqual(first);
    expect(first).toMatchObject({ state: "pending", attempts: 0, seconds: 5, file: null, fail_kind: null });
    for (const field of ["id", "created_at", "updated_at"] as const)
      expect(typeof first[field]).toBe("number");

    const list = [job(3), JOB, job(1), job(2), job(1)];
    const heads = await store.upsertJobs(list);
    expect(heads.map((head) => head.id)[1]).toBe(first.id);
    expect(heads[2]).toEqual(heads[4]);
    expect(heads.every((head) => typeof head.id === "number" && head.state === "pending")).toBe(true);
    expect(new Set(heads.map((head) => head.id)).size).toBe(4);
    expect(await store.upsertJobs(list)).toEqual(heads);
    expect((await store.listJobs()).map((row) => row.job_key)).toEqual(["m/a", "m/v3", "m/v1", "m/v2"]);
    expect(
      await store.notRecorded([
        { key: "m/v2", specHash: "h1" },
        { key: "m/v2", specHash: "h2" },
      ]),
    ).toEqual([{ key: "m/v2", specHash: "h2" }]);
    expect(await store.versionHead("m/v3", "h1")).toEqual({
      id: heads[0]!.id,
      state: "pending",
      attempts: 0,
      file: null,
    });
  });

  it("never writes one runner's failure or doubt over a job another runner claimed", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const [id] = (await one.upsertJobs([job(1)])).map((head) => head.id);
    expect(await one.markSubmitting(id!)).toBe(1);
    // Two read the job pending before one claimed it; its own preparation then failed.
    await two.markFailed(id!, "local", "the file vanished on this machine");
    await two.markUncertain(id!, "its speech's outcome is unknown here");
    expect(await two.getJob(id!)).toMatchObject({ state: "submitting", error: null });
    await one.markSubmitted(id!, "t1");
    await two.markFailed(id!, "local", "late");
    expect(await two.getJob(id!)).toMatchObject({ state: "submitted", task_id: "t1" });
    // Its own intent, one may mark.
    await one.markUncertain(id!, "mine");
    expect((await one.getJob(id!)).state).toBe("submitted"); // answered: no longer an intent
  });

  it("keeps a late answer of a runner taken over, whatever that runner writes after it", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const [id] = (await one.upsertJobs([job(1)])).map((head) => head.id);
    expect(await one.markSubmitting(id!)).toBe(1);
    // One is found gone (as after its lease), and two takes its work over: the intent is uncertain.
    await query(url, "UPDATE runners SET stopped_at = 1, lost_at = 1 WHERE id = $1", [one.runnerId]);
    expect((await two.fleet!.takeOverLost()).uncertain).toBe(1);
    // One wakes with the service's answer: recorded for another runner to follow, then it stops.
    await expect(one.markSubmitted(id!, "t9")).rejects.toThrow(/taken over|silent for longer/);
    await one.markUncertain(id!, "the answer could not be recorded");
    expect(await two.getJob(id!)).toMatchObject({ state: "submitted", task_id: "t9" });
    expect((await two.fleet!.takeOverLost()).unheld).toBe(1);
    expect(await two.fleet!.holdTask(id!)).toBe(true);
  });

  it("records one task id for one job when two stores' answers name it at the same moment", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    for (let round = 0; round < 10; round++) {
      const [a, b] = (await one.upsertJobs([job(2 * round), job(2 * round + 1)])).map((head) => head.id);
      expect(await one.markSubmitting(a!)).toBe(1);
      expect(await two.markSubmitting(b!)).toBe(1);
      const answers = await Promise.all([
        one.markSubmitted(a!, `t${round}`),
        two.markSubmitted(b!, `t${round}`),
      ]);
      // One is recorded; the other names the job that holds the task, and writes nothing.
      expect(
        answers.filter((holder) => holder === undefined),
        `round ${round}`,
      ).toHaveLength(1);
      const rows = await query<{ n: number }>(url, "SELECT count(*)::int AS n FROM jobs WHERE task_id = $1", [
        `t${round}`,
      ]);
      expect(rows).toEqual([{ n: 1 }]);
    }
  });

  it("claims a job once when two stores race for twenty jobs", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const heads = await one.upsertJobs(Array.from({ length: 20 }, (_, n) => job(n)));
    const ids = heads.map((head) => head.id);
    const [byOne, byTwo] = await Promise.all([
      Promise.all(ids.map((id) => one.markSubmitting(id))),
      Promise.all(ids.map((id) => two.markSubmitting(id))),
    ]);
    for (let i = 0; i < ids.length; i++) {
      const won = [byOne[i], byTwo[i]].filter((attempt) => attempt !== null);
      expect(won, `job ${ids[i]}`).toEqual([1]);
    }
    const rows = await one.listJobs();
    expect(rows.every((row) => row.state === "submitting" && row.attempts === 1)).toBe(true);
    // One intent each, each with its event, written in the statement of the claim.
    expect(await query(url, "SELECT count(*)::int AS n FROM events WHERE kind = 'submitting'")).toEqual([
      { n: 20 },
    ]);
  });

  it("ends a claim whose runner stopped mid-transaction (paused, cut off) after half a lease: the others' claims go on", async (context) => {
    const url = await database(context);
    const lease = { ...DEFAULT_LEASE, leaseMs: 2_000, heartbeatMs: 333 };
    const [one, two] = [await open(url, undefined, { lease }), await open(url, undefined, { lease })];
    const [first, second] = (await one.upsertJobs([job(1), job(2)])).map((head) => head.id);
    // One's connection stalls before its claim's second statement, the service's row locked: as
    // a runner paused between two statements of its transaction.
    // (pool.connect() with no callback: the transactions'; single statements take it with one.)
    const pool = (one as unknown as { c: { pool: pg.Pool } }).c.pool;
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
    let stall = true;
    (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args) => {
      if (args.length > 0) return connect(...args);
      return (connect() as Promise<pg.PoolClient>).then((client) => {
        const send = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
        (client as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = async (...a) => {
          if (stall && String(a[0]).startsWith("UPDATE runners")) {
            stall = false;
            await new Promise((r) => setTimeout(r, 4_000));
          }
          return send(...a);
        };
        return client;
      });
    };
    const stalled = one.markSubmitting(first!);
    stalled.catch(() => {}); // judged below
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    expect(await two.markSubmitting(second!)).toBe(1);
    // Held for half a lease (1 s), not for the 4 s of the stall.
    expect(Date.now() - started).toBeLessThan(3_000);
    // The stalled claim finds its transaction gone, nothing of it kept, and makes it again (its
    // runner is alive: it beat meanwhile): one attempt, one intent.
    expect(await stalled).toBe(1);
    expect(await one.getJob(first!)).toMatchObject({ state: "submitting", attempts: 1 });
    expect(await one.markSubmitting(first!)).toBeNull();
  });

  it("holds the account's row for a claim's one statement only: a runner slow between two round trips keeps no other runner's claim waiting", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const [first, second] = (await one.upsertJobs([job(1), job(2)])).map((head) => head.id);
    // One's link is slow after a statement that locks a row (FOR UPDATE): a claim of several round
    // trips would hold the service's row across that wait, and every other claim with it.
    const pool = (one as unknown as { c: { pool: pg.Pool } }).c.pool;
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args) => {
      if (args.length > 0) return connect(...args);
      return (connect() as Promise<pg.PoolClient>).then((client) => {
        const send = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
        let locked = false;
        (client as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = async (...a) => {
          if (locked) await new Promise((r) => setTimeout(r, 1_500));
          locked = String(a[0]).includes("FOR UPDATE");
          return send(...a);
        };
        return client;
      });
    };
    const slow = one.markSubmitting(first!);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    expect(await two.markSubmitting(second!)).toBe(1);
    expect(Date.now() - started).toBeLessThan(750);
    expect(await slow).toBe(1);
    await Promise.all([one.close(), two.close()]);
  });

  it("claims a job charged to a named budget in one statement, its share told in it: a runner slow between round trips keeps no other runner's claim waiting", async (context) => {
    const url = await database(context);
    // Heartbeats far apart: every statement counted below is the claim's.
    const lease = { ...DEFAULT_LEASE, leaseMs: 600_000, heartbeatMs: 100_000 };
    const [one, two] = [await open(url, undefined, { lease }), await open(url, undefined, { lease })];
    const setter = await openBudgetStore("", url);
    const team = await setter.setBudget("team", { maxSeconds: 10 });
    await setter.close();
    const [first, second] = (await one.upsertJobs([job(1), job(2)])).map((head) => head.id);
    const session = await one.startBudgetSession("run a", { host: "here", pid: 1 });
    const charge = (seconds: number) => ({
      session: session.id,
      model: "actor-2",
      resolution: null,
      seconds,
      credits: null,
      named: { budget: team.id, seconds, credits: 0 },
    });
    // One's link is slow after a statement that locks a row (on a client of its own, as a
    // transaction's statements are sent), and every statement it sends is counted.
    const pool = (one as unknown as { c: { pool: pg.Pool } }).c.pool;
    let sent = 0;
    const poolQuery = pool.query.bind(pool) as (...a: unknown[]) => unknown;
    (pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a) => {
      sent++;
      return poolQuery(...a);
    };
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args) => {
      if (args.length > 0) return connect(...args);
      return (connect() as Promise<pg.PoolClient>).then((client) => {
        const send = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
        let locked = false;
        (client as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = async (...a) => {
          sent++;
          if (locked) await new Promise((r) => setTimeout(r, 1_500));
          locked ||= String(a[0]).includes("FOR UPDATE");
          return send(...a);
        };
        return client;
      });
    };
    // 8 s of 10: the claim passes 80%, and tells it.
    const slow = one.markSubmitting(first!, charge(8));
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    expect(await two.markSubmitting(second!, charge(2))).toBe(1);
    expect(Date.now() - started).toBeLessThan(750);
    expect(await slow).toBe(1);
    expect(sent).toBe(1);
    const told = await query<{ detail: string }>(
      url,
      "SELECT detail FROM events WHERE kind = 'budget-notice' ORDER BY id",
    );
    expect(told.map((row) => JSON.parse(row.detail) as unknown)).toEqual([
      { percent: 80, budget: "team", cap: "seconds", spent: 8, max: 10 },
      { percent: 100, budget: "team", cap: "seconds", spent: 10, max: 10 },
    ]);
  });

  it("reads a followed writer's events back when it commits them, and not at all while it writes nothing", async (context) => {
    const url = await database(context);
    const lease = { ...DEFAULT_LEASE, leaseMs: 3_000, heartbeatMs: 100 };
    const store = await open(url, undefined, { lease });
    const [first] = (await store.upsertJobs([job(1)])).map((head) => head.id);
    // The writer's read-backs of its events, counted; the heartbeats (on their own connection) are
    // the clock of the idle span below.
    const pool = (store as unknown as { c: { pool: pg.Pool } }).c.pool;
    let reads = 0;
    const poolQuery = pool.query.bind(pool) as (...a: unknown[]) => unknown;
    (pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a) => {
      if (/FROM events e/.test(String(a[0]))) reads++;
      return poolQuery(...a);
    };
    const beats = (store as unknown as { runner: { pool: pg.Pool } }).runner.pool;
    let beaten = 0;
    let onBeat = (): void => {};
    const beatQuery = beats.query.bind(beats) as (...a: unknown[]) => Promise<unknown>;
    (beats as unknown as { query: (...a: unknown[]) => unknown }).query = (...a) =>
      beatQuery(...a).finally(() => {
        beaten++;
        onBeat();
      });
    const beatsFromNow = (n: number) => {
      const until = beaten + n;
      return new Promise<void>((resolve) => {
        onBeat = () => {
          if (beaten >= until) resolve();
        };
      });
    };
    const told: string[] = [];
    let onTold = (): void => {};
    const stop = store.followOwnEvents((list) => {
      told.push(...list.map((e) => e.kind));
      onTold();
    });
    const toldAll = (n: number) =>
      new Promise<void>((resolve) => {
        onTold = () => {
          if (told.length >= n) resolve();
        };
        onTold();
      });
    try {
      // The follower starts from the last event recorded when it started: its first read is under way.
      await beatsFromNow(1);
      expect(await store.markSubmitting(first!)).toBe(1);
      await toldAll(1);
      expect(told).toEqual(["submitting"]);
      // Idle for six heartbeats (600 ms): nothing written, nothing read.
      await beatsFromNow(1);
      const before = reads;
      await beatsFromNow(6);
      expect(reads - before).toBe(0);
      // A burst of writes is read back in few reads, each event once, in order.
      const burst = reads;
      for (let i = 0; i < 20; i++) store.noteEvent("job.queued", null, `m/q${i}`);
      expect(await store.markSubmitted(first!, "task-1")).toBeUndefined();
      await toldAll(22);
      // The notes of a turn go in one statement, before the answer issued after them.
      expect(told).toEqual(["submitting", ...Array.from({ length: 20 }, () => "job.queued"), "submitted"]);
      expect(reads - burst).toBeLessThanOrEqual(3);
    } finally {
      await stop();
    }
    expect(told).toHaveLength(22);
  });

  it("follows every runner's events (reel events --follow) as they are committed, reading nothing while none are", async (context) => {
    const url = await database(context);
    const lease = { ...DEFAULT_LEASE, leaseMs: 3_000, heartbeatMs: 100 };
    const writer = await open(url, undefined, { lease });
    const [first] = (await writer.upsertJobs([job(1)])).map((head) => head.id);
    const reader = await open(url, "https://a.example", { readonly: true });
    // The follower's reads, counted; the writer's heartbeats are the clock of the idle span.
    let reads = 0;
    const readEvents = reader.readEvents.bind(reader);
    reader.readEvents = (query) => {
      reads++;
      return readEvents(query);
    };
    const beats = (writer as unknown as { runner: { pool: pg.Pool } }).runner.pool;
    let beaten = 0;
    let onBeat = (): void => {};
    const beatQuery = beats.query.bind(beats) as (...a: unknown[]) => Promise<unknown>;
    (beats as unknown as { query: (...a: unknown[]) => unknown }).query = (...a) =>
      beatQuery(...a).finally(() => {
        beaten++;
        onBeat();
      });
    const beatsFromNow = (n: number) => {
      const until = beaten + n;
      return new Promise<void>((resolve) => {
        onBeat = () => {
          if (beaten >= until) resolve();
        };
      });
    };
    const told: string[] = [];
    let onTold = (): void => {};
    const toldAll = (n: number) =>
      new Promise<void>((resolve) => {
        onTold = () => {
          if (told.length >= n) resolve();
        };
        onTold();
      });
    const stop = new AbortController();
    const following = readBack(reader, { follow: true, signal: stop.signal }, (list) => {
      told.push(...list.map((e) => e.type));
      onTold();
    });
    try {
      // Registered once it has read (watchEventCommits is awaited first); the writer learns of it at
      // its next beat.
      await vi.waitUntil(() => reads > 0);
      await beatsFromNow(2);
      expect(await writer.markSubmitting(first!)).toBe(1);
      await toldAll(1);
      // Idle for twelve heartbeats (1.2 s): nothing committed, nothing read.
      await beatsFromNow(1);
      const before = reads;
      await beatsFromNow(12);
      expect(reads - before).toBe(0);
      // Told by the writer's notice, well before the follower's 5 s fallback read.
      const sent = Date.now();
      expect(await writer.markSubmitted(first!, "task-1")).toBeUndefined();
      await toldAll(2);
      expect(Date.now() - sent).toBeLessThan(2_500);
      expect(told).toEqual(["job.submitting", "job.submitted"]);
    } finally {
      stop.abort();
      await following;
    }
  });

  it("claims a job only from the states a submission starts from", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const row = await seedJob(store, JOB);
    expect(await store.markSubmitting(row.id)).toBe(1);
    expect(await store.markSubmitting(row.id)).toBeNull();
    await store.markFailed(row.id, "local", "the file vanished");
    expect(await store.markSubmitting(row.id)).toBe(2);
    await store.markFailed(row.id, "rejected", "422");
    expect(await store.markSubmitting(row.id)).toBeNull();
    await store.markUncertain(row.id, "lost answer");
    expect(await store.markSubmitting(row.id)).toBeNull();
    expect(await store.markPending(row.id, "--resubmit-uncertain")).toBe(true);
    expect(await store.markPending(row.id, "again")).toBe(false);
    expect(await store.markSubmitting(row.id)).toBe(3);
    await expect(store.markSubmitting(row.id + 1000)).rejects.toThrow(StateFileError);
    await expect(store.markSubmitting(row.id + 1000)).rejects.toThrow(/not in the state file/);
  });

  it("makes a failed job pending again once when two stores retry it at the same moment", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const rows = await Promise.all(Array.from({ length: 10 }, (_, n) => seedJob(one, job(n))));
    for (const row of rows) {
      await one.markSubmitting(row.id);
      await one.markUncertain(row.id, "lost");
    }
    const results = await Promise.all(
      rows.flatMap((row) => [one.markPending(row.id, "one"), two.markPending(row.id, "two")]),
    );
    for (let i = 0; i < rows.length; i++)
      expect([results[2 * i], results[2 * i + 1]].filter(Boolean)).toHaveLength(1);
  });

  it("makes one speech intent win when two stores race, and only over an uncertain one", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const texts = Array.from({ length: 20 }, (_, n) => `hello ${n}`);
    const outcomes = await Promise.allSettled(
      texts.flatMap((text) => [one.markSpeechCreating("17", text), two.markSpeechCreating("17", text)]),
    );
    for (let i = 0; i < texts.length; i++) {
      const pair = [outcomes[2 * i]!, outcomes[2 * i + 1]!];
      expect(pair.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const lost = pair.find((o) => o.status === "rejected") as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(ClaimLostError);
    }
    // Over a done speech: lost; over an uncertain one: made again.
    await one.markSpeechDone("17", "hello 0", "501", 2.5);
    await expect(two.markSpeechCreating("17", "hello 0")).rejects.toThrow(ClaimLostError);
    expect(await two.findSpeech("17", "hello 0")).toEqual({
      state: "done",
      asset_id: "501",
      duration: 2.5,
      error: null,
    });
    expect(await one.madeAsset("501")).toBe(true);
    await one.markSpeechUncertain("17", "hello 1", "lost");
    await two.markSpeechCreating("17", "hello 1");
    expect(await one.findSpeech("17", "hello 1")).toMatchObject({ state: "creating", error: null });
    // Another runner's call under way is its own to clear.
    await one.clearSpeech("17", "hello 1");
    expect(await one.findSpeech("17", "hello 1")).toMatchObject({ state: "creating" });
    await two.clearSpeech("17", "hello 1");
    expect(await one.findSpeech("17", "hello 1")).toBeUndefined();
    // The intents of live runners are theirs; those of runners gone are uncertain at the next start.
    expect(await one.markInterruptedSpeechUncertain()).toBe(0);
    await Promise.all([one.close(), two.close()]);
    const next = await open(url);
    expect(await next.markInterruptedSpeechUncertain()).toBe(18);
    // Another service's speech is not this one's.
    const other = await open(url, "https://b.example");
    await other.markSpeechCreating("17", "hello 0");
  });

  it("makes one upload intent win when two stores race; a store's own intent again is its own", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    const hashes = Array.from({ length: 20 }, (_, n) => `sha-${n}`);
    const outcomes = await Promise.allSettled(
      hashes.flatMap((sha) => [one.markUploading(sha), two.markUploading(sha)]),
    );
    for (let i = 0; i < hashes.length; i++) {
      const pair = [outcomes[2 * i]!, outcomes[2 * i + 1]!];
      expect(pair.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      expect((pair.find((o) => o.status === "rejected") as PromiseRejectedResult).reason).toBeInstanceOf(
        ClaimLostError,
      );
    }
    const winnerOf = (n: number) => (outcomes[2 * n]!.status === "fulfilled" ? one : two);
    const mine = winnerOf(0);
    await mine.markUploading("sha-0"); // an upload retried in the same run
    await mine.recordAsset("sha-0", "900", 1234);
    expect(await two.findAsset("sha-0")).toBe("900");
    // Only its own runner forgets an intent (the winner of sha-1 need not be the winner of sha-0).
    await winnerOf(1).forgetUploadIntent("sha-1");
    // Taken at start: the intents without an asset (19 written, one recorded, one forgotten) of
    // runners gone, never of live ones.
    expect(await one.takeInterruptedUploads()).toBe(0);
    const wonByTwo = hashes.filter((_, n) => n > 1 && outcomes[2 * n + 1]!.status === "fulfilled").length;
    await two.close();
    const taker = await open(url);
    expect(await taker.takeInterruptedUploads()).toBe(wonByTwo);
    await taker.close();
    await one.close();
    const last = await open(url);
    expect(await last.takeInterruptedUploads()).toBe(18 - wonByTwo);
    await last.forgetAssetId("900");
    expect(await last.findAsset("sha-0")).toBeUndefined();
    expect(await last.madeAsset("900")).toBe(false);
  });

  it("refuses an upload intent for content another store uploaded since it was looked up, also while that record commits", async (context) => {
    const url = await database(context);
    const [one, two] = [await open(url), await open(url)];
    // Looked up by both, uploaded and recorded by one: the other's intent, later, is refused.
    await one.markUploading("sha-a");
    expect(await two.findAsset("sha-a")).toBeUndefined();
    await one.recordAsset("sha-a", "901", 10);
    await expect(two.markUploading("sha-a")).rejects.toBeInstanceOf(ClaimLostError);
    // Also by the store that uploaded it (its own intent once, its asset now).
    await expect(one.markUploading("sha-a")).rejects.toBeInstanceOf(ClaimLostError);

    // The other's intent arrives while the record is being committed: its insert waits on the
    // intent's key, then goes through once the record removed it; it must still see the asset.
    await one.markUploading("sha-b");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        `WITH done AS (DELETE FROM upload_intents WHERE sha256 = 'sha-b')
         INSERT INTO assets (service_id, sha256, asset_id, size, uploaded_at)
           SELECT id, 'sha-b', '902', 10, 0 FROM services`,
      );
      const late = two.markUploading("sha-b");
      late.catch(() => {}); // judged below
      await new Promise((r) => setTimeout(r, 300));
      await client.query("COMMIT");
      await expect(late).rejects.toBeInstanceOf(ClaimLostError);
    } finally {
      await client.end();
    }
    expect(await query(url, "SELECT sha256 FROM upload_intents")).toEqual([]);

    // An asset the service lost is forgotten: its content may be uploaded again.
    await two.forgetAssetId("902");
    await two.markUploading("sha-b");
  });

  it("gives the attempt back when a submission is refused or withdrawn, and only from its intent", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const row = await seedJob(store, JOB);
    expect(await store.markSubmitting(row.id)).toBe(1);
    await store.markRefused(row.id, "503 busy");
    expect(await store.getJob(row.id)).toMatchObject({ state: "pending", attempts: 0, error: "503 busy" });
    expect(await store.markSubmitting(row.id)).toBe(1);
    await store.withdrawSubmitting(row.id);
    expect(await store.getJob(row.id)).toMatchObject({ state: "pending", attempts: 0 });
    expect(await store.markSubmitting(row.id)).toBe(1);
    await store.markSubmitted(row.id, "77");
    // Late, after the answer was recorded (another writer's, say): nothing changes.
    await store.withdrawSubmitting(row.id);
    await store.markRefused(row.id, "late");
    expect(await store.getJob(row.id)).toMatchObject({
      state: "submitted",
      attempts: 1,
      task_id: "77",
      error: null,
    });
    const kinds = await query<{ kind: string }>(
      url,
      "SELECT kind FROM events WHERE job_id = $1 ORDER BY id",
      [row.id],
    );
    expect(kinds.map((e) => e.kind)).toEqual([
      "submitting",
      "refused",
      "submitting",
      "withdrawn",
      "submitting",
      "submitted",
    ]);
  });

  it("records the task's statuses, the final ones as the job's state", async (context) => {
    const url = await database(context);
    const store = await open(url, "https://a.example", { now: () => 1_700_000_000_000 });
    const ids: number[] = [];
    for (const n of [0, 1, 2]) {
      const row = await seedJob(store, job(n));
      await store.markSubmitting(row.id);
      await store.markSubmitted(row.id, `t${n}`);
      ids.push(row.id);
    }
    const [ok, failed, canceled] = ids as [number, number, number];
    expect((await store.listInFlight()).map((row) => row.id)).toEqual(ids);
    await store.recordTaskStatus(ok, "Running", undefined, undefined);
    expect(await store.getJob(ok)).toMatchObject({
      state: "submitted",
      task_status: "Running",
      running_at: 1_700_000_000_000,
    });
    await store.recordTaskStatus(ok, "Success", "https://cdn.example/v.mp4", undefined);
    await store.recordTaskStatus(failed, "Fail", undefined, "bad prompt");
    await store.recordTaskStatus(canceled, "Canceled", undefined, undefined);
    expect(await store.getJob(ok)).toMatchObject({
      state: "Success",
      result_url: "https://cdn.example/v.mp4",
      finished_at: 1_700_000_000_000,
      submitted_at: 1_700_000_000_000,
    });
    expect(await store.getJob(failed)).toMatchObject({
      state: "Fail",
      fail_kind: "task",
      error: "bad prompt",
    });
    expect(await store.getJob(canceled)).toMatchObject({
      state: "Canceled",
      error: "the task was canceled on the service",
    });
    expect(await store.listInFlight()).toEqual([]);
    expect([...(await store.madeSpecs())]).toEqual([["h1", "m/v0"]]);
    await store.recordResultUrl(ok, "https://cdn.example/fresh.mp4");
    expect((await store.getJob(ok)).result_url).toBe("https://cdn.example/fresh.mp4");
  });

  it("records a download with its video, and forgets it", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const row = await seedJob(store, JOB);
    await store.markSubmitting(row.id);
    await store.markSubmitted(row.id, "5");
    await store.recordTaskStatus(row.id, "Success", "https://cdn.example/a.mp4", undefined);
    await store.recordJobError(row.id, "disk full");
    const video = { size: 5_000_000_000, sha256: "ab".repeat(32), stamp: "s1" };
    const done = await store.markDownloaded(await store.getJob(row.id), "m/a.mp4", "/out", video);
    expect(done).toMatchObject({ file: "m/a.mp4", out_dir: "/out", error: null, file_size: 5_000_000_000 });
    expect(await store.getJob(row.id)).toEqual(done);
    expect(await store.downloadedVersions()).toEqual(new Set(["m/a\nh1"]));
    expect(await store.listJobsWithFile("m/a", "m/a.mp4")).toMatchObject([{ id: row.id, out_dir: "/out" }]);
    expect(await store.listJobsWithFile("m/a", "m/b.mp4")).toEqual([]);
    const stamped = await store.recordVideoStamp(done, "s2");
    expect(await store.getJob(row.id)).toEqual(stamped);
    const errorCleared = await store.clearJobError(stamped);
    expect(errorCleared.error).toBeNull();
    const forgotten = await store.forgetDownload(errorCleared);
    expect(forgotten).toMatchObject({
      file: null,
      out_dir: null,
      downloaded_at: null,
      file_size: null,
      file_stamp: null,
    });
    expect(await store.getJob(row.id)).toEqual(forgotten);
    expect(await store.downloadedVersions()).toEqual(new Set());
  });

  it("turns a submission without a recorded answer into an uncertain job at the next start", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const row = await seedJob(store, JOB);
    const sent = await seedJob(store, job(1));
    await store.markSubmitting(row.id);
    await store.markSubmitting(sent.id);
    await store.markSubmitted(sent.id, "8");
    await store.close();
    const next = await open(url);
    expect(await next.markInterruptedSubmissionsUncertain()).toBe(1);
    expect(await next.getJob(row.id)).toMatchObject({ state: "uncertain", attempts: 1 });
    expect(await next.getJob(sent.id)).toMatchObject({ state: "submitted", task_id: "8" });
    expect(await next.markInterruptedSubmissionsUncertain()).toBe(0);
  });

  it("forgets only unsent jobs a manifest no longer lists", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const kept = await seedJob(store, JOB);
    const removed = await seedJob(store, job(1));
    const paid = await seedJob(store, job(2));
    const elsewhere = await seedJob(store, { ...JOB, key: "n/d", manifest: "n", videoId: "d" });
    await store.markSubmitting(paid.id);
    await store.markSubmitted(paid.id, "9");
    expect(await store.forgetUnsentJobs("m", new Set(["m/a\nh1"]))).toBe(1);
    expect((await store.listJobs()).map((row) => row.id)).toEqual([kept.id, paid.id, elsewhere.id]);
    await expect(store.markSubmitting(removed.id)).rejects.toThrow(/not in the state file/);
  });

  it("names the jobs another service was paid for, and the latest version of each job", async (context) => {
    const url = await database(context);
    const real = await open(url, "https://real.example");
    const sandbox = await open(url, "sandbox:local");
    const here = await open(url, "https://alias.example");
    for (const store of [real, sandbox]) {
      const row = await seedJob(store, JOB);
      await store.markSubmitting(row.id);
    }
    const unsent = await seedJob(real, job(1));
    const asked = [
      { key: "m/a", specHash: "h1" },
      { key: "m/v1", specHash: "h1" },
    ];
    expect(await here.notSentAnywhere(asked)).toEqual([asked[1]]);
    expect(await here.listSentElsewhere(asked, ["sandbox:local"])).toEqual([
      { key: "m/a", baseUrl: "https://real.example" },
    ]);
    expect(await real.listSentElsewhere(asked, [])).toEqual([]);
    expect(await here.listSentElsewhere(asked, ["sandbox:local", "https://real.example"])).toEqual([]);
    // A version edited, then the edit undone: the one whose video holds <id>.mp4 is the latest.
    const v2 = await seedJob(real, { ...JOB, specHash: "h2" });
    const v1 = (await real.findJob("m/a", "h1"))!;
    await real.markDownloaded(v1, "m/a.mp4", "/out");
    const latest = await real.listLatestJobs();
    expect(latest.map((row) => [row.id, row.base_url])).toEqual([
      [v1.id, "https://real.example"],
      [unsent.id, "https://real.example"],
    ]);
    expect(latest.map((row) => row.id)).not.toContain(v2.id);
    const everyService = await PgStore.open(url, { readonly: true });
    opened.push(everyService);
    expect((await everyService.listLatestJobs()).map((row) => row.base_url).sort()).toEqual([
      "https://real.example",
      "https://real.example",
      "sandbox:local",
    ]);
  });

  it("restores jobs from the output folder's records over unsent or lost rows only", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const lost = await seedJob(store, JOB);
    await store.markSubmitting(lost.id);
    const done = await seedJob(store, job(1));
    await store.markSubmitting(done.id);
    await store.markSubmitted(done.id, "1");
    const record = (n: NewJob, taskId: string) => ({ ...submittedRecord(n, taskId), specJson: "null" });
    expect(await store.restoreJobs([record(JOB, "40"), record(job(1), "41"), record(job(2), "42")])).toBe(2);
    expect(await store.getJob(lost.id)).toMatchObject({ state: "submitted", task_id: "40", spec_json: "{}" });
    expect(await store.getJob(done.id)).toMatchObject({ task_id: "1" });
    expect(await store.findJob("m/v2", "h1")).toMatchObject({
      state: "submitted",
      task_id: "42",
      spec_json: "null",
    });
  });

  it("keeps the caches of local files per machine", async (context) => {
    const url = await database(context);
    const here = await open(url, "https://a.example", { host: "laptop" });
    const there = await open(url, "https://b.example", { host: "server" });
    const stamp = { size: 10, mtimeNs: "1", ctimeNs: "2", ino: "3" };
    await here.recordFileHash("/media/a.jpg", stamp, "sha-a");
    expect(await here.findFileHash("/media/a.jpg", stamp)).toBe("sha-a");
    expect(await here.findFileHash("/media/a.jpg", { ...stamp, ino: "4" })).toBeUndefined();
    expect(await there.findFileHash("/media/a.jpg", stamp)).toBeUndefined();
    await here.recordFileHash("/media/a.jpg", { ...stamp, ino: "4" }, "sha-b");
    expect(await here.findFileHash("/media/a.jpg", { ...stamp, ino: "4" })).toBe("sha-b");
    await here.recordRemote("https://x.example/a.jpg", "sha-r", "/cache/r", 99);
    expect(await here.findRemote("https://x.example/a.jpg")).toEqual({
      sha256: "sha-r",
      path: "/cache/r",
      size: 99,
    });
    expect(await there.findRemote("https://x.example/a.jpg")).toBeUndefined();
  });

  it("resumes a runner's budget count once it stopped, whatever host and pid it recorded; never a live runner's", async (context) => {
    const url = await database(context);
    const lease = leaseTimingOf({ REEL_LEASE_SECONDS: "1" });
    const request = { caps: { maxSeconds: 10 }, prices: undefined, scope: "run x" };
    const waits: string[] = [];
    const onWait = (line: string): number => waits.push(line);
    const a = await open(url, undefined, { lease });
    const first = await openBudget(a, request, { onWait });
    // A second runner of the same manifests meanwhile: the first one's heartbeat says it runs, so
    // each counts its own (the same host and pid as here, which once resumed it).
    const b = await open(url, undefined, { lease });
    const second = await openBudget(b, request, { onWait });
    expect(second.session.id).not.toBe(first.session.id);
    expect(waits).toHaveLength(1);
    // The first stops; it was on another machine: the next runner resumes its count.
    await query(url, "UPDATE budget_sessions SET host = 'elsewhere', pid = 1 WHERE id = $1", [
      first.session.id,
    ]);
    await a.close();
    const c = await open(url, undefined, { lease });
    const third = await openBudget(c, request, { onWait });
    expect(third.session.id).toBe(first.session.id);
    expect(
      await query(url, "SELECT runner_id FROM budget_sessions WHERE id = $1", [first.session.id]),
    ).toEqual([{ runner_id: String(c.runnerId) }]);
  });

  it("never shows the URL's password, in its path nor in an error", async (context) => {
    const url = new URL(await database(context));
    const good = await open(url.toString());
    expect(good.path).not.toContain("reel_test@");
    expect(good.path).toContain(":***@");
    expect(good.journalScope).toEqual({ state: good.path, service: "https://a.example" });
    url.password = "s3cret-Pa55word";
    const error = await PgStore.open(url.toString(), { baseUrl: "https://a.example" }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(StateFileError);
    expect(error?.message).toContain(":***@");
    expect(error?.message).not.toContain("s3cret-Pa55word");
    expect(String((error as Error & { cause?: unknown }).cause ?? "")).not.toContain("s3cret-Pa55word");
  });
});
