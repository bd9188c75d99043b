// A writer of the PostgreSQL store is a runner (issue 18): registered at open with its host, pid and
// concurrency, beating while it runs (a short heartbeat here), stopped at close; one that vanished
// without closing (kill -9) shows as lost once its lease ends. On a real server, a database per test.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LEASE, LEASE_MS, RUNNERS_SHOWN_MS } from "../../src/state/pg/lease.js";
import { type OpenPgStoreOptions, PgStore } from "../../src/state/pg/store.js";
import { until } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";

const database = usePostgres();

const opened: PgStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

async function open(url: string, options: Partial<OpenPgStoreOptions> = {}): Promise<PgStore> {
  const store = await PgStore.open(url, { baseUrl: "https://a.example", ...options });
  opened.push(store);
  return store;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

interface RunnerRow {
  host: string;
  pid: number;
  concurrency: number;
  started_at: string;
  heartbeat_at: string;
  stopped_at: string | null;
}

async function runnerRow(url: string, id: number): Promise<RunnerRow> {
  const [row] = await query<RunnerRow>(
    url,
    "SELECT host, pid, concurrency, started_at, heartbeat_at, stopped_at FROM runners WHERE id = $1",
    [id],
  );
  return row!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the runners of a PostgreSQL store", () => {
  it("registers a writer with its host, pid and concurrency, beats, and records its stop", async (context) => {
    const url = await database(context);
    const writer = await open(url, {
      host: "build-7",
      concurrency: 6,
      lease: { ...DEFAULT_LEASE, heartbeatMs: 40 },
    });
    const id = writer.runnerId!;
    expect(id).toBeGreaterThan(0);
    const first = await runnerRow(url, id);
    expect(first).toMatchObject({ host: "build-7", pid: process.pid, concurrency: 6, stopped_at: null });
    expect(first.heartbeat_at).toBe(first.started_at);

    // The heartbeat moves on by itself.
    await until(
      async () => Number((await runnerRow(url, id)).heartbeat_at) > Number(first.started_at),
      "a heartbeat",
    );
    expect(writer.heartbeatError).toBeUndefined();

    const reader = await open(url, { readonly: true });
    expect(reader.runnerId).toBeUndefined();
    const [shown, ...others] = await reader.listRunners();
    expect(others).toEqual([]);
    expect(shown).toMatchObject({
      id,
      host: "build-7",
      pid: process.pid,
      concurrency: 6,
      state: "running",
      stoppedAt: null,
      jobsHeld: 0,
    });
    expect(shown!.heartbeatAgeMs).toBeLessThan(LEASE_MS);

    await writer.close();
    const stopped = await runnerRow(url, id);
    expect(stopped.stopped_at).not.toBeNull();
    expect((await reader.listRunners())[0]).toMatchObject({ id, state: "stopped" });
    // No beat after the stop.
    await sleep(200);
    expect((await runnerRow(url, id)).heartbeat_at).toBe(stopped.heartbeat_at);
  });

  it("a writer whose concurrency is not given records 0; a reader registers nothing", async (context) => {
    const url = await database(context);
    const reader = await open(url, { readonly: true });
    expect(await reader.listRunners()).toEqual([]);
    const writer = await open(url);
    expect((await runnerRow(url, writer.runnerId!)).concurrency).toBe(0);
    expect(await query(url, "SELECT count(*)::int AS n FROM runners")).toEqual([{ n: 1 }]);
  });

  it("keeps beating after a beat fails, and says the failure meanwhile", async (context) => {
    const url = await database(context);
    const writer = await open(url, { lease: { ...DEFAULT_LEASE, heartbeatMs: 30 } });
    // The beats' table gone for a moment: every beat fails, and the process goes on.
    await query(url, "ALTER TABLE runners RENAME TO runners_away");
    await until(() => writer.heartbeatError !== undefined, "a failed beat");
    expect(writer.heartbeatError!.message).toMatch(/runners/);
    const before = await query<{ heartbeat_at: string }>(url, "SELECT heartbeat_at FROM runners_away");
    await query(url, "ALTER TABLE runners_away RENAME TO runners");
    await until(() => writer.heartbeatError === undefined, "a beat recorded again");
    const after = await runnerRow(url, writer.runnerId!);
    expect(Number(after.heartbeat_at)).toBeGreaterThan(Number(before[0]!.heartbeat_at));
  });

  it("shows a runner that vanished without closing (kill -9) as lost, and long-gone ones only while they hold jobs", async (context) => {
    const url = await database(context);
    const writer = await open(url, { host: "here" });
    const job = await writer.upsertJob({
      key: "m/a",
      manifest: "m",
      videoId: "a",
      specHash: "h1",
      specJson: "{}",
      seconds: 5,
      model: "actor-2",
    });
    const now = Date.now();
    // As a killed runner leaves its row: a heartbeat past the lease, and no stop recorded.
    const insert = (host: string, heartbeatAgo: number) =>
      query<{ id: string }>(
        url,
        "INSERT INTO runners (host, pid, started_at, heartbeat_at, concurrency) VALUES ($1, 4242, $2, $2, 4) RETURNING id",
        [host, now - heartbeatAgo],
      ).then((rows) => Number(rows[0]!.id));
    const killed = await insert("gone", LEASE_MS + 5_000);
    await insert("ancient", RUNNERS_SHOWN_MS + 60_000);
    const holding = await insert("ancient-holding", RUNNERS_SHOWN_MS + 60_000);
    await query(url, "UPDATE jobs SET state = 'submitted', runner_id = $1 WHERE id = $2", [holding, job.id]);

    const reader = await open(url, { readonly: true });
    const runners = await reader.listRunners();
    expect(runners.map((r) => [r.host, r.state, r.jobsHeld])).toEqual([
      ["ancient-holding", "lost", 1],
      ["gone", "lost", 0],
      ["here", "running", 0],
    ]);
    const gone = runners.find((r) => r.id === killed)!;
    expect(gone.heartbeatAgeMs).toBeGreaterThanOrEqual(LEASE_MS);
    expect(gone).toMatchObject({ pid: 4242, concurrency: 4, stoppedAt: null });
  });
});
