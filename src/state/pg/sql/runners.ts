// The runners table: a writer registers at open, beats while it runs, and stops at close; `reel
// status` lists them. Every time here is the database server's clock in epoch milliseconds (DB_NOW),
// not the runner's: runners on several machines are compared with one another, and one clock makes
// a lease mean the same everywhere whatever the machines' clocks say. (The jobs' own times stay the
// writer's, as in the state file.)
import type { PgContext } from "./context.js";
import { toNumber, toNumberOrNull } from "./context.js";

/** The server's clock now, in epoch milliseconds (clock_timestamp: now, not the transaction's start). */
export const DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

type Pool = Pick<PgContext, "pool">;

export interface NewRunner {
  readonly host: string;
  readonly pid: number;
  /** The service it works for (its bound is that service's); none for -1 or 0. */
  readonly serviceId: number;
  /** Its --concurrency; 0 when unknown. */
  readonly concurrency: number;
}

/** Records a runner that starts: its id. Its first heartbeat is its start (one reading of the clock). */
export async function registerRunner(c: Pool, runner: NewRunner): Promise<number> {
  const { rows } = await c.pool.query<{ id: string }>(
    `INSERT INTO runners (host, pid, started_at, heartbeat_at, connected_at, concurrency, service_id)
       SELECT $1, $2, now_ms, now_ms, now_ms, $3, $4 FROM (SELECT ${DB_NOW} AS now_ms) AS clock RETURNING id`,
    [runner.host, runner.pid, runner.concurrency, runner.serviceId > 0 ? runner.serviceId : null],
  );
  return toNumber(rows[0]!.id);
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
): Promise<{ value: number } | undefined> {
  const { rows } = await c.pool.query<{ id: string }>(
    "SELECT id FROM runners WHERE host = $1 AND pid = $2 AND started_at >= $3 AND stopped_at IS NULL ORDER BY id DESC LIMIT 1",
    [runner.host, runner.pid, since],
  );
  return rows[0] ? { value: toNumber(rows[0].id) } : undefined;
}

/**
 * The assignments that record runner `$id` alive now. A runner silent for longer than `gapMs` (two
 * missed beats: it could not reach the database either) is heard again from now on (connected_at):
 * see sql/fleet.ts for why that matters.
 */
export function aliveNow(gapMs: number): string {
  return `connected_at = CASE WHEN heartbeat_at < ${DB_NOW} - ${Math.round(gapMs)} THEN ${DB_NOW} ELSE connected_at END, heartbeat_at = ${DB_NOW}`;
}

/** Records that runner `id` is alive. False when its row is stopped (or gone). */
export async function beat(c: Pool, id: number, gapMs: number): Promise<boolean> {
  const { rowCount } = await c.pool.query(
    `UPDATE runners SET ${aliveNow(gapMs)} WHERE id = $1 AND stopped_at IS NULL`,
    [id],
  );
  return rowCount === 1;
}

/** Records that runner `id` stopped (its store closed). */
export async function stopRunner(c: Pool, id: number): Promise<void> {
  await c.pool.query(`UPDATE runners SET stopped_at = ${DB_NOW} WHERE id = $1 AND stopped_at IS NULL`, [id]);
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
