// The runners table: a writer registers at open, beats while it runs, and stops at close; `reel
// status` lists them. Every time here is the database server's clock in epoch milliseconds (DB_NOW),
// not the runner's: runners on several machines are compared with one another, and one clock makes
// a lease mean the same everywhere whatever the machines' clocks say. (The jobs' own times stay the
// writer's, as in the state file.)
import type pg from "pg";
import { canonicalBaseUrl } from "../../../service-contract/base-url.js";
import { type ExclusiveAddress, NOT_SANDBOX } from "../../service-address.js";
import { type AddressInUse, AddressInUseError } from "../../../errors/state.js";
import type { PgContext } from "./context.js";
import { inTransaction, toNumber, toNumberOrNull } from "./context.js";

/** The server's clock now, in epoch milliseconds (clock_timestamp: now, not the transaction's start). */
export const DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

type Pool = Pick<PgContext, "pool">;

export interface NewRunner {
  readonly host: string;
  readonly pid: number;
  /** Where its pid names it (see pid-space.ts); "" unknown. */
  readonly pidSpace: string;
  /** The service it works for (canonical base URL): its bound is that service's. */
  readonly baseUrl: string;
  /** Its --concurrency; 0 when unknown. */
  readonly concurrency: number;
  /** Refused while another address of the store is in use (see service-address.ts); none to allow any. */
  readonly exclusive?: ExclusiveAddress;
}

/** A runner registered: its id, and its service's. */
export interface Registered {
  readonly runnerId: number;
  readonly serviceId: number;
}

/**
 * Serialises the registrations of runners (any constant; "reeladdr" in ASCII), so that of two
 * starting at once through two addresses the second sees the first, committed, and is refused.
 */
const REGISTRATION_LOCK = "8243122740829054066";

/**
 * Records a runner that starts, with its service (created if new), in one transaction under
 * REGISTRATION_LOCK: with `exclusive`, refused (AddressInUseError) while another address has live
 * runners or jobs being made; accepted, the runners of other addresses silent past `leaseMs` are
 * marked lost, taken over by this one, so that none of them wakes up to work beside it. Its first
 * heartbeat is its start (one reading of the clock).
 */
export async function registerRunner(c: Pool, runner: NewRunner, leaseMs: number): Promise<Registered> {
  return inTransaction(c, async (client) => {
    // A runner paused here would hold every other start up: the database ends it (see fleet.ts).
    await client.query("SELECT set_config('idle_in_transaction_session_timeout', $1, true)", [
      String(Math.max(1, Math.round(leaseMs / 2))),
    ]);
    await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [REGISTRATION_LOCK]);
    const free = runner.exclusive?.free.map(canonicalBaseUrl) ?? [];
    if (runner.exclusive) {
      const others = await addressesInUse(client, runner.baseUrl, free, leaseMs);
      if (others.length > 0) throw new AddressInUseError("store", runner.baseUrl, others);
    }
    // DO UPDATE rather than DO NOTHING, so that RETURNING gives the row that was there.
    const { rows: service } = await client.query<{ id: string }>(
      "INSERT INTO services (base_url) VALUES ($1) ON CONFLICT (base_url) DO UPDATE SET base_url = excluded.base_url RETURNING id",
      [runner.baseUrl],
    );
    const serviceId = toNumber(service[0]!.id);
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO runners (host, pid, pid_space, started_at, heartbeat_at, connected_at, concurrency, service_id)
         SELECT $1, $2, $3, now_ms, now_ms, now_ms, $4, $5 FROM (SELECT ${DB_NOW} AS now_ms) AS clock RETURNING id`,
      [runner.host, runner.pid, runner.pidSpace || null, runner.concurrency, serviceId],
    );
    const runnerId = toNumber(rows[0]!.id);
    if (runner.exclusive) {
      await client.query(
        `UPDATE runners SET stopped_at = ${DB_NOW}, lost_at = ${DB_NOW}, taken_by = $1, lost_why = 'silent'
           WHERE stopped_at IS NULL AND service_id <> $2 AND heartbeat_at < ${DB_NOW} - $3
             AND service_id IN (SELECT id FROM services WHERE base_url <> ALL ($4::text[]) AND ${NOT_SANDBOX("base_url")})`,
        [runnerId, serviceId, leaseMs, free],
      );
    }
    return { runnerId, serviceId };
  });
}

/** The addresses other than `here` (and not free, nor a sandbox) with live runners or jobs being submitted or made. */
async function addressesInUse(
  client: pg.PoolClient,
  here: string,
  free: readonly string[],
  leaseMs: number,
): Promise<AddressInUse[]> {
  const { rows } = await client.query<{ base_url: string; runners: string; jobs: string }>(
    `SELECT base_url, runners, jobs FROM (
       SELECT s.id, s.base_url,
              (SELECT count(*) FROM runners r WHERE r.service_id = s.id AND r.stopped_at IS NULL
                 AND r.heartbeat_at >= ${DB_NOW} - $3) AS runners,
              (SELECT count(*) FROM jobs j WHERE j.service_id = s.id
                 AND j.state IN ('submitting', 'submitted')) AS jobs
         FROM services s WHERE s.base_url <> $1 AND s.base_url <> ALL ($2::text[]) AND ${NOT_SANDBOX("s.base_url")}) AS used
       WHERE runners > 0 OR jobs > 0 ORDER BY id`,
    [here, [...free], leaseMs],
  );
  return rows.map((row) => ({
    baseUrl: row.base_url,
    liveRunners: toNumber(row.runners),
    unfinishedJobs: toNumber(row.jobs),
  }));
}

/** The server's clock now (DB_NOW). */
export async function dbNow(c: Pool): Promise<number> {
  const { rows } = await c.pool.query<{ now_ms: string }>(`SELECT ${DB_NOW} AS now_ms`);
  return toNumber(rows[0]!.now_ms);
}

/**
 * Whether registerRunner, tried at or after `since` (dbNow) by this process, committed though its
 * answer was lost: the row of this host and pid started since then (no other process had this pid on
 * this host meanwhile, as this one lives).
 */
export async function registeredSince(
  c: Pool,
  runner: NewRunner,
  since: number,
): Promise<{ value: Registered } | undefined> {
  const { rows } = await c.pool.query<{ id: string; service_id: string }>(
    "SELECT id, service_id FROM runners WHERE host = $1 AND pid = $2 AND started_at >= $3 AND stopped_at IS NULL ORDER BY id DESC LIMIT 1",
    [runner.host, runner.pid, since],
  );
  const row = rows[0];
  return row ? { value: { runnerId: toNumber(row.id), serviceId: toNumber(row.service_id) } } : undefined;
}

/**
 * The assignments that record runner `$id` alive now. A runner silent for longer than `gapMs` (two
 * missed beats: it could not reach the database either) is heard again from now on (connected_at):
 * see sql/fleet.ts for why that matters.
 */
export function aliveNow(gapMs: number): string {
  return `connected_at = CASE WHEN heartbeat_at < ${DB_NOW} - ${Math.round(gapMs)} THEN ${DB_NOW} ELSE connected_at END, heartbeat_at = ${DB_NOW}`;
}

/**
 * Records that runner `id` is alive: `alive` false when its row is stopped (or gone). And whether
 * some process follows every runner's events (event_followers: ../event-notices.ts).
 */
export async function beat(
  c: Pool,
  id: number,
  gapMs: number,
): Promise<{ alive: boolean; followed: boolean }> {
  const { rows } = await c.pool.query<{ alive: boolean; followed: boolean }>(
    `WITH beaten AS (UPDATE runners SET ${aliveNow(gapMs)} WHERE id = $1 AND stopped_at IS NULL RETURNING id)
     SELECT EXISTS (SELECT 1 FROM beaten) AS alive,
            EXISTS (SELECT 1 FROM event_followers WHERE until_at > ${DB_NOW}) AS followed`,
    [id],
  );
  return rows[0]!;
}

export type RunnerState = "running" | "stopped" | "lost";

export interface RunnerView {
  readonly id: number;
  readonly host: string;
  readonly pid: number;
  readonly concurrency: number;
  /** Epoch milliseconds, the server's clock. */
  readonly startedAt: number;
  readonly heartbeatAt: number;
  readonly stoppedAt: number | null;
  /** How long ago its last heartbeat was, by the server's clock. */
  readonly heartbeatAgeMs: number;
  /** running: heard from within `leaseMs`; stopped: closed its store; lost: neither (killed, or cut off). */
  readonly state: RunnerState;
  /** Its jobs being submitted or followed (state submitting or submitted with its runner_id). */
  readonly jobsHeld: number;
}

/**
 * The runners heard from within `shownMs` and those holding jobs, oldest first. Jobs held count every
 * service's: a runner is one process, whatever the reader's service.
 */
export async function listRunners(c: Pool, leaseMs: number, shownMs: number): Promise<RunnerView[]> {
  const { rows } = await c.pool.query<{
    id: string;
    host: string;
    pid: number;
    concurrency: number;
    started_at: string;
    heartbeat_at: string;
    stopped_at: string | null;
    heartbeat_age: string;
    state: RunnerState;
    jobs_held: string;
  }>(
    `WITH clock AS (SELECT ${DB_NOW} AS now),
          held AS (SELECT runner_id, count(*) AS n FROM jobs
                     WHERE state IN ('submitting', 'submitted') AND runner_id IS NOT NULL
                     GROUP BY runner_id)
     SELECT r.id, r.host, r.pid, r.concurrency, r.started_at, r.heartbeat_at, r.stopped_at,
            clock.now - r.heartbeat_at AS heartbeat_age,
            CASE WHEN r.stopped_at IS NOT NULL THEN 'stopped'
                 WHEN clock.now - r.heartbeat_at <= $1 THEN 'running'
                 ELSE 'lost' END AS state,
            coalesce(held.n, 0) AS jobs_held
       FROM runners r CROSS JOIN clock LEFT JOIN held ON held.runner_id = r.id
       WHERE r.heartbeat_at >= clock.now - $2 OR held.n > 0
       ORDER BY r.started_at, r.id`,
    [leaseMs, shownMs],
  );
  return rows.map((row) => ({
    id: toNumber(row.id),
    host: row.host,
    pid: row.pid,
    concurrency: row.concurrency,
    startedAt: toNumber(row.started_at),
    heartbeatAt: toNumber(row.heartbeat_at),
    stoppedAt: toNumberOrNull(row.stopped_at),
    heartbeatAgeMs: Math.max(0, toNumber(row.heartbeat_age)),
    state: row.state,
    jobsHeld: toNumber(row.jobs_held),
  }));
}
