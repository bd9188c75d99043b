// A PostgreSQL store that stops answering. The outage rule alone (no database):
// connection failures tried again with backoff and said once, other errors passed on, a write that
// may have committed asked first, a limit. Then on a real server behind a TCP proxy the test cuts:
// a writer waits and goes on; a reader fails at once; an outage that silenced every runner takes
// nobody over, while a runner silent as another was heard is taken over.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { OutageEvent } from "../../src/state/job-store.js";
import { DEFAULT_LEASE } from "../../src/state/pg/lease.js";
import { isConnectionError, Outage } from "../../src/state/pg/outage.js";
import { type OpenPgStoreOptions, PgStore } from "../../src/state/pg/store.js";
import { StoreUnreachableError } from "../../src/errors/state.js";
import { until } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { throughProxy, useTcpProxies } from "../helpers/tcp-proxy.js";
import { JOB } from "../helpers/seed-jobs.js";

const database = usePostgres();
const proxy = useTcpProxies();

const opened: PgStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

async function open(url: string, options: Partial<OpenPgStoreOptions> = {}): Promise<PgStore> {
  const store = await PgStore.open(url, { baseUrl: "https://a.example", concurrency: 2, ...options });
  opened.push(store);
  return store;
}

const refused = (): Error =>
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the outage rule", () => {
  it("tries a connection failure again until the store answers, and says down and up once each", async () => {
    const outage = new Outage(60_000, "postgres://db/reel", async () => {});
    const events: OutageEvent[] = [];
    outage.onChange((event) => events.push(event));
    let calls = 0;
    const value = await outage.run(async () => {
      if (++calls < 4) throw refused();
      return "answered";
    });
    expect(value).toBe("answered");
    expect(calls).toBe(4);
    expect(events.map((e) => e.state)).toEqual(["down", "up"]);
    expect(events[0]).toMatchObject({ error: "connect ECONNREFUSED 127.0.0.1:5432", limitMs: 60_000 });
    expect(outage.down).toBe(false);
  });

  it("passes an error of the statement on at once, saying nothing", async () => {
    const outage = new Outage(60_000, "postgres://db/reel", async () => {});
    const events: OutageEvent[] = [];
    outage.onChange((event) => events.push(event));
    const syntax = Object.assign(new Error('syntax error at or near "SELEC"'), { code: "42601" });
    await expect(outage.run(() => Promise.reject(syntax))).rejects.toBe(syntax);
    expect(events).toEqual([]);
  });

  it("asks whether a write that may have committed did, before writing it again", async () => {
    const outage = new Outage(60_000, "postgres://db/reel", async () => {});
    let committed = 0;
    let asked = 0;
    const attempt = await outage.run(
      async () => {
        committed++;
        // Committed, then the connection broke before the answer came.
        throw Object.assign(new Error("Connection terminated unexpectedly"), {});
      },
      async () => {
        asked++;
        return committed > 0 ? { value: 7 } : undefined;
      },
    );
    expect(attempt).toBe(7);
    expect(committed).toBe(1);
    expect(asked).toBe(1);
  });

  it("gives up past its limit with an error naming the store, not its password; a reader gives up at once", async () => {
    const outage = new Outage(50, "postgres://reel:***@db/reel", async (ms) => {
      await sleep(Math.min(ms, 10));
    });
    const error = await outage.run(() => Promise.reject(refused())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnreachableError);
    expect((error as StoreUnreachableError).code).toBe("E_STORE_UNREACHABLE");
    expect((error as Error).message).toMatch(
      /^the store postgres:\/\/reel:\*\*\*@db\/reel has not answered for 0 s \(connect ECONNREFUSED/,
    );
    const reader = new Outage(0, "postgres://db/reel");
    await expect(reader.run(() => Promise.reject(refused()))).rejects.toThrow(/ECONNREFUSED/);
  });

  it("knows a connection failure from a statement's", () => {
    expect(isConnectionError(refused())).toBe(true);
    expect(isConnectionError(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(
      true,
    );
    expect(isConnectionError(Object.assign(new Error("x"), { code: "08006" }))).toBe(true);
    expect(isConnectionError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionError(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    expect(isConnectionError("ECONNREFUSED")).toBe(false);
  });
});

describe("a PostgreSQL store that stops answering", () => {
  it("makes a writer wait while it is cut off, then go on; a reader fails at once", async (context) => {
    const url = await database(context);
    const cutter = await proxy({ host: "127.0.0.1", port: Number(new URL(url).port) });
    const writer = await open(throughProxy(url, cutter));
    const events: OutageEvent[] = [];
    writer.fleet!.onOutage((event) => events.push(event));
    const [job] = await writer.upsertJobs([{ ...JOB, model: "actor-1" }]);
    const reader = await open(throughProxy(url, cutter), { readonly: true });

    cutter.cut();
    let claimed: number | null | "full" | undefined;
    const claim = writer.markSubmitting(job!.id).then((attempt) => (claimed = attempt));
    await expect(reader.listJobs()).rejects.toThrow();
    await sleep(600);
    expect(claimed).toBeUndefined(); // no claim while no intent can be recorded
    expect(events.map((e) => e.state)).toEqual(["down"]);
    cutter.restore();
    await claim;
    expect(claimed).toBe(1);
    expect(events.map((e) => e.state)).toEqual(["down", "up"]);
    expect((await writer.getJob(job!.id)).state).toBe("submitting");
  });

  it("takes nobody over after an outage that silenced every runner, but takes over one silent while another was heard", async (context) => {
    const url = await database(context);
    const lease = { ...DEFAULT_LEASE, leaseMs: 600, heartbeatMs: 100 };
    const cutA = await proxy({ host: "127.0.0.1", port: Number(new URL(url).port) });
    const cutB = await proxy({ host: "127.0.0.1", port: Number(new URL(url).port) });
    const a = await open(throughProxy(url, cutA), { lease });
    const b = await open(throughProxy(url, cutB), { lease });

    // The database gone for everyone, for three leases.
    cutA.cut();
    cutB.cut();
    await sleep(1_800);
    cutA.restore();
    cutB.restore();
    expect((await b.fleet!.takeOverLost()).lost).toEqual([]);
    await sleep(1_000);
    expect((await b.fleet!.takeOverLost()).lost).toEqual([]);
    expect((await a.fleet!.takeOverLost()).lost).toEqual([]);

    // A alone cut off, while B is heard: A is lost once its lease ends.
    // Waited for rather than slept on: on a loaded machine B's own heartbeat may come late, and a
    // takeover is only made by a runner heard within the lease.
    cutA.cut();
    await sleep(600);
    let found = await b.fleet!.takeOverLost();
    for (const deadline = Date.now() + 10_000; found.lost.length === 0 && Date.now() < deadline;) {
      await sleep(100);
      found = await b.fleet!.takeOverLost();
    }
    expect(found.lost.map((r) => r.id)).toEqual([a.runnerId]);
    const rows = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const { rows: lost } = await rows.query<{ lost_at: string | null; taken_by: string | null }>(
        "SELECT lost_at, taken_by FROM runners WHERE id = $1",
        [a.runnerId],
      );
      expect(lost[0]!.lost_at).not.toBeNull();
      expect(Number(lost[0]!.taken_by)).toBe(b.runnerId);
    } finally {
      await rows.end();
    }
    cutA.restore();
  });
});

describe("a PostgreSQL store whose session the server ends (pg_terminate_backend, a restart)", () => {
  it("reads a statement's answer and the end of its session at once, while a claim waits for the connection, without crashing: both go on", async (context) => {
    const url = await database(context);
    const proxied = await proxy({ host: "127.0.0.1", port: Number(new URL(url).port) });
    const writer = await open(throughProxy(url, proxied));
    const [job] = await writer.upsertJobs([{ ...JOB, model: "actor-1" }]);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // What would end a reel process (an 'error' event nobody listens to), counted here.
    const crashes: string[] = [];
    const crashed = (error: Error): void => void crashes.push(error.message);
    process.on("uncaughtException", crashed);
    try {
      // The writer's one connection answers a statement; a claim (a transaction) waits for it. The
      // server ends the session just after that answer, and the writer reads both at once, as a busy
      // process does: the connection is handed to the claim in between.
      proxied.hold();
      const listed = writer.listJobs();
      const claim = writer.markSubmitting(job!.id);
      await until(async () => {
        const { rows } = await admin.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' AND query LIKE '%FROM jobs%'",
        );
        return rows[0]!.n === "1";
      }, "the statement answered");
      const { rows } = await admin.query<{ ended: boolean }>(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()",
      );
      await until(() => proxied.closedWhileHeld >= rows.length, "the sessions closed");
      proxied.release();
      expect((await listed).map((row) => row.job_key)).toEqual(["m/a"]);
      expect(crashes).toEqual([]);
      expect(await claim).toBe(1);
      expect((await writer.getJob(job!.id)).state).toBe("submitting");
    } finally {
      process.off("uncaughtException", crashed);
      proxied.release();
      await admin.end();
    }
  });
});
