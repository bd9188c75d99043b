// A writer of the PostgreSQL store is a runner: registered at open with its host, pid and
// concurrency, beating while it runs (a short heartbeat here), stopped at close; one that vanished
// without closing (kill -9) shows as lost once its lease ends. On a real server, a database per test.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { AddressInUseError } from "../../src/errors/state.js";
import { DEFAULT_LEASE, LEASE_MS, RUNNERS_SHOWN_MS } from "../../src/state/pg/lease.js";
import { type OpenPgStoreOptions, PgStore } from "../../src/state/pg/store.js";
import { until } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { JOB, seedJob } from "../helpers/seed-jobs.js";

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
  connected_at: string;
  stopped_at: string | null;
}

async function runnerRow(url: string, id: number): Promise<RunnerRow> {
  const [row] = await query<RunnerRow>(
    url,
    "SELECT host, pid, concurrency, started_at, heartbeat_at, connected_at, stopped_at FROM runners WHERE id = $1",
    [id],
  );
  return row!;
}

/** Above Linux's largest pid (2^22): no process has it. */
const GONE_PID = 2 ** 22 + 7;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the runners of a PostgreSQL store", () => {
  it("registers a writer with its host, pid and concurrency, beats, and records its stop", async (context) => {
    const url = await database(context);
    const writer = await open(url, {
      host: "build-7",
      concurrency: 6,
      // Beats 0.3 s apart: a silence of two beats (which moves the connection stamp) is not one
      // moment of a busy machine.
      lease: { ...DEFAULT_LEASE, heartbeatMs: 300 },
    });
    const id = writer.runnerId!;
    expect(id).toBeGreaterThan(0);
    const first = await runnerRow(url, id);
    expect(first).toMatchObject({ host: "build-7", pid: process.pid, concurrency: 6, stopped_at: null });
    // Its start, its first heartbeat and its connection from one reading of the server's clock; the
    // heartbeat may have moved on before the row is read on a busy machine, the
    // connection stamp does not (it moves only after a silence).
    expect(first.connected_at).toBe(first.started_at);
    expect(Number(first.heartbeat_at)).toBeGreaterThanOrEqual(Number(first.started_at));

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
    const job = await seedJob(writer, JOB);
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

  it("of two writers starting at the same instant through two addresses, exactly one registers: round after round", async (context) => {
    const url = await database(context);
    const exclusiveAddress = { free: ["sandbox:local"] };
    const addresses = ["http://127.0.0.1:8080", "http://localhost:8080"];
    const winners: string[] = [];
    for (let round = 0; round < 12; round++) {
      const started = await Promise.allSettled(
        addresses.map((baseUrl) => PgStore.open(url, { baseUrl, exclusiveAddress })),
      );
      const won = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const refused = started.flatMap((s) => (s.status === "rejected" ? [s.reason as Error] : []));
      opened.push(...won);
      expect(won).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toBeInstanceOf(AddressInUseError);
      const winner = addresses[started.findIndex((s) => s.status === "fulfilled")]!;
      const loser = addresses.find((a) => a !== winner)!;
      expect(refused[0]!.message).toContain(
        `another address of the service: ${winner} (1 live runner), not ${loser}`,
      );
      winners.push(winner);
      // Stopped, its address rests: the next round is open to either.
      await won[0]!.close();
    }
    // A refused runner left no row, and its address was not recorded unless it won a round.
    expect(await query(url, "SELECT count(*)::int AS n FROM runners")).toEqual([{ n: 12 }]);
    expect(
      (await query<{ base_url: string }>(url, "SELECT base_url FROM services ORDER BY base_url")).map(
        (r) => r.base_url,
      ),
    ).toEqual([...new Set(winners)].sort());
  });

  it("an uncertain submission holds its slot of the account for the hold by the database's clock, whatever the runners' clocks say", async (context) => {
    const url = await database(context);
    const lease = { ...DEFAULT_LEASE, uncertainHoldMs: 1_000 };
    const MINUTES_20 = 20 * 60_000;
    // Three machines of one account, bound 1: one 20 minutes behind, one 20 minutes ahead.
    const behind = await open(url, { concurrency: 1, lease, now: () => Date.now() - MINUTES_20 });
    const ahead = await open(url, { concurrency: 1, lease, now: () => Date.now() + MINUTES_20 });
    const exact = await open(url, { concurrency: 1, lease });
    const jobs = [];
    for (const id of ["v0", "v1", "v2"]) {
      jobs.push(
        await seedJob(exact, {
          key: `promo/${id}`,
          manifest: "promo",
          videoId: id,
          specHash: "h1",
          specJson: "{}",
          seconds: 5,
          model: "actor-2",
        }),
      );
    }
    const [v0, v1, v2] = jobs.map((job) => job.id) as [number, number, number];
    // Found uncertain by the machine behind: by its clock, long past the hold; by the database's, now.
    expect(await behind.markSubmitting(v0)).toBe(1);
    await behind.markUncertain(v0, "cut off mid-request");
    expect(await exact.markSubmitting(v1)).toBe("full");
    await sleep(1_200);
    expect(await ahead.markSubmitting(v1)).toBe(1);
    // Found uncertain by the machine ahead: the hold still ends a second later, not 20 minutes.
    await ahead.markUncertain(v1, "cut off mid-request");
    expect(await exact.markSubmitting(v2)).toBe("full");
    await sleep(1_200);
    expect(await exact.markSubmitting(v2)).toBe(1);
  });

  it("another machine's sandbox at work keeps no address out: a runner of a service starts beside it", async (context) => {
    const url = await database(context);
    // As `--sandbox` on machine b names its service in a shared store (cli/service-options.ts).
    const sandbox = await open(url, { baseUrl: "sandbox:local@machine-b" });
    const sandboxJob = await seedJob(sandbox, {
      key: "promo/v0",
      manifest: "promo",
      videoId: "v0",
      specHash: "h1",
      specJson: "{}",
      seconds: 5,
      model: "actor-2",
    });
    expect(await sandbox.markSubmitting(sandboxJob.id)).toBe(1);
    const service = await open(url, {
      baseUrl: "http://127.0.0.1:8080",
      exclusiveAddress: { free: ["sandbox:local"] },
    });
    expect(service.runnerId).toBeGreaterThan(sandbox.runnerId!);
    // Nor is the sandbox's work taken for work sent to another service.
    const job = { key: "promo/v0", specHash: "h1" };
    expect(await service.listSentElsewhere([job], ["sandbox:local"])).toEqual([]);
  });

  it("a runner of another address silent past its lease does not block a new one, and is taken over by it: it cannot wake up beside it", async (context) => {
    const url = await database(context);
    const exclusiveAddress = { free: [] };
    // Its next beat far off: the test is over before it comes.
    const lease = { ...DEFAULT_LEASE, leaseMs: 30_000, heartbeatMs: 25_000 };
    const paused = await open(url, { baseUrl: "http://127.0.0.1:8080", exclusiveAddress, lease });
    const pausedId = paused.runnerId!;
    // Its heartbeat stopped, as a paused process's (its row's last beat past the lease).
    await query(url, "UPDATE runners SET heartbeat_at = heartbeat_at - 60000 WHERE id = $1", [pausedId]);
    const moved = await open(url, { baseUrl: "http://localhost:8080", exclusiveAddress, lease });
    expect(await query(url, "SELECT taken_by::int AS by FROM runners WHERE id = $1", [pausedId])).toEqual([
      { by: moved.runnerId },
    ]);
    // Awake, the first runner's next claim finds it taken over.
    await expect(paused.fleet!.takeOverLost()).rejects.toThrow(/silent for longer than its lease/);
  });

  // Two machines given one host name, whose runners have the same pid (two containers, each its
  // reel as pid 1): what is known of a process on one says nothing of a process on the other.
  it("two live runners with one host name and one pid on two machines are never taken over while they beat; a runner of this machine whose process is gone is, at once", async (context) => {
    const url = await database(context);
    const lease = { ...DEFAULT_LEASE, leaseMs: 2_000, heartbeatMs: 200 };
    const twin = (pidSpace: string) => open(url, { host: "twin", pid: GONE_PID, pidSpace, lease });
    const a = await twin("boot-a/pid:[4026531836]");
    const b = await twin("boot-b/pid:[4026531836]");
    // Beat after beat, each takes over what it finds lost (as a runner does every heartbeat): never
    // the other.
    for (let beat = 0; beat < 4; beat++) {
      expect((await a.fleet!.takeOverLost()).lost).toEqual([]);
      expect((await b.fleet!.takeOverLost()).lost).toEqual([]);
      await sleep(lease.heartbeatMs);
    }
    const live = await query<{ n: number }>(
      url,
      "SELECT count(*)::int AS n FROM runners WHERE stopped_at IS NULL",
    );
    expect(live).toEqual([{ n: 2 }]);

    // A runner of this machine (this boot, this PID namespace) whose process is gone is lost at once,
    // its lease not waited out, and told why; the twins, still beating, stay.
    const here = await open(url, { host: "twin", lease });
    const killed = await open(url, { host: "twin", pid: GONE_PID, lease });
    expect((await here.fleet!.takeOverLost()).lost).toEqual([
      { id: killed.runnerId, host: "twin", pid: GONE_PID, why: "gone" },
    ]);
    await expect(killed.fleet!.takeOverLost()).rejects.toThrow(
      `this runner (${killed.runnerId} in the store) was taken for ended: a runner of its machine found no process under its pid (taken over by runner ${here.runnerId})`,
    );
    expect(await query(url, "SELECT count(*)::int AS n FROM runners WHERE stopped_at IS NULL")).toEqual([
      { n: 3 },
    ]);
  });
});
