// The claim of a submission and its answer, on the shared store: the rules they keep (once per job,
// one account-wide bound, fencing) are told at the top of fleet.ts.
import type pg from "pg";
import { JobGoneError } from "../../errors.js";
import type { VideoCharge } from "../../job-store.js";
import { inTransaction, toNumber } from "./context.js";
import { spendFromBudget } from "./named-budgets.js";
import { aliveNow, DB_NOW } from "./runners.js";
import { CLAIM, CLAIMABLE } from "../../job-state-rule.js";

import { type FleetContext, fleetTransaction, idleLimit, leaseLostError } from "./fleet.js";

/** What a claim found: the attempt it made, the row already moved on (null), or the bound full. */
export type Claim = number | null | "full";

/**
 * The intent of a submission, fenced and bounded (see above). Throws LeaseLostError if this runner
 * was taken over, JobGoneError if the row is gone.
 */
export async function claimJob(c: FleetContext, id: number, charge?: VideoCharge): Promise<Claim> {
  // Counted first without the lock, and before the transaction: a claim that would find the bound
  // full costs one statement and takes no lock at all (while the bound is full, most claims are
  // those). One that finds room counts again under it. On the connection taken for the claim at
  // once: a writer's statements keep the order they were issued in.
  const result = await inTransaction(
    c,
    (client) => claimIn(client, c, id, charge),
    (client) => isFull(c, client),
  );
  if (result === "lost-lease") throw await leaseLostError(c, "Nothing more is submitted by it.");
  // No intent, no request: a job whose row is gone must never be paid for unrecorded.
  if (result === "gone") throw new JobGoneError(`job ${id} is not in the state file; it was not submitted`);
  return result === undefined ? "full" : result;
}

/**
 * The claim's transaction: two statements between BEGIN and COMMIT, the service's row held from the
 * first to the commit: the lock with the fence (the service's row first, then the runner's: the
 * order every claim takes them in), and the count with the compare-and-set. Two, not one: READ
 * COMMITTED takes a statement's snapshot when it starts, so the count must start after the lock was
 * given to see every claim committed before it.
 */
async function claimIn(
  client: pg.PoolClient,
  c: FleetContext,
  id: number,
  charge: VideoCharge | undefined,
): Promise<Claim | "lost-lease" | "gone"> {
  const { rows: fence } = await client.query<{ fenced: string }>(
    `WITH locked AS (SELECT id FROM services WHERE id = $2 FOR UPDATE),
       fenced AS (
         UPDATE runners SET ${aliveNow(2 * c.lease.heartbeatMs)}
           WHERE id = $1 AND stopped_at IS NULL AND EXISTS (SELECT 1 FROM locked) RETURNING id)
       SELECT set_config('idle_in_transaction_session_timeout', $3, true), (SELECT count(*) FROM fenced) AS fenced`,
    [c.runnerId, c.serviceId, idleLimit(c)],
  );
  if (toNumber(fence[0]!.fenced) !== 1) return "lost-lease" as const;
  const now = c.now();
  const { rows } = await client.query<{ room: boolean; attempts: number | null; present: boolean }>(
    `WITH room AS (SELECT NOT ${FULL("$9", "$10", "$11")} AS ok),
       claimed AS (
         UPDATE jobs SET ${CLAIM}, runner_id = $3, updated_at = $2
           WHERE id = $1 AND ${CLAIMABLE}
             AND (SELECT ok FROM room)
           RETURNING id, attempts),
       noted AS (INSERT INTO events (at, job_id, runner_id, kind) SELECT $2::bigint, id, $3, 'submitting' FROM claimed),
       charged AS (
         INSERT INTO spend (session_id, job_id, attempt, model, resolution, seconds, credits, at)
           SELECT $4::bigint, id, attempts, $5, $6, $7, $8::double precision, $2::bigint FROM claimed WHERE $4::bigint IS NOT NULL
           ON CONFLICT (session_id, job_id, attempt) WHERE job_id IS NOT NULL DO NOTHING)
       SELECT (SELECT ok FROM room) AS room, (SELECT attempts FROM claimed) AS attempts,
              EXISTS (SELECT 1 FROM jobs WHERE id = $1) AS present`,
    [
      id,
      now,
      c.runnerId,
      charge?.session ?? null,
      charge?.model ?? null,
      charge?.resolution ?? null,
      charge?.seconds ?? 0,
      charge?.credits ?? null,
      ...fullParams(c),
    ],
  );
  const row = rows[0]!;
  if (!row.room) return "full" as const;
  if (row.attempts !== null) {
    // A named budget's check, in the claim's transaction: no room rolls the claim back (it throws).
    if (charge?.named) await spendFromBudget(client, now, charge.named, { jobId: id, attempt: row.attempts });
    return row.attempts;
  }
  return row.present ? null : ("gone" as const);
}

/**
 * True when the service's unfinished generations (submitting, submitted, and uncertain lately: see
 * UNCERTAIN_HOLD_MS) reach the smallest --concurrency of its live runners: an SQL expression over the
 * parameters named (the service's id, the uncertain hold, the lease). The hold is measured by the
 * database's clock (uncertain_at, which it sets: migration 13), as the lease is, so runners whose
 * clocks disagree count the same jobs.
 */
const FULL = (service: string, hold: string, lease: string): string =>
  `coalesce((SELECT count(*) FROM jobs WHERE service_id = ${service}
       AND (state IN ('submitting', 'submitted') OR (state = 'uncertain' AND uncertain_at >= ${DB_NOW} - ${hold})))
     >= (SELECT min(concurrency) FROM runners WHERE service_id = ${service} AND concurrency > 0
       AND stopped_at IS NULL AND heartbeat_at >= ${DB_NOW} - ${lease}), false)`;

/** FULL's parameters, in its order. */
const fullParams = (c: FleetContext): [number, number, number] => [
  c.serviceId,
  c.lease.uncertainHoldMs,
  c.lease.leaseMs,
];

/** Whether the bound is full (FULL), in a statement of its own. */
async function isFull(c: FleetContext, on: Pick<pg.PoolClient, "query">): Promise<boolean> {
  const { rows } = await on.query<{ full: boolean }>(
    `SELECT ${FULL("$1", "$2", "$3")} AS full`,
    fullParams(c),
  );
  return rows[0]!.full;
}

/**
 * Whether this runner's claim of job `id` committed, though its connection broke before the answer
 * came (pg/outage.ts): the job is `submitting` and held by this runner, which makes one claim of a
 * job at a time. Its attempt if so.
 */
export async function claimLanded(c: FleetContext, id: number): Promise<{ value: number } | undefined> {
  const { rows } = await c.pool.query<{ attempts: number }>(
    "SELECT attempts FROM jobs WHERE id = $1 AND state = 'submitting' AND runner_id = $2",
    [id, c.runnerId],
  );
  return rows[0] && { value: rows[0].attempts };
}

/**
 * Whether this runner's answer to job `id` (task `taskId`) committed though its connection broke:
 * undefined if not (it is written again); throws as answerJob does if it landed late.
 */
export async function answerLanded(
  c: FleetContext,
  id: number,
  taskId: string,
): Promise<{ value: undefined } | undefined> {
  const { rows } = await c.pool.query<{ runner_id: string | null }>(
    "SELECT runner_id FROM jobs WHERE id = $1 AND state = 'submitted' AND task_id = $2",
    [id, taskId],
  );
  if (!rows[0]) return undefined;
  if (rows[0].runner_id !== null && toNumber(rows[0].runner_id) === c.runnerId) return { value: undefined };
  throw await leaseLostError(
    c,
    `The service's answer to its submission (task ${taskId}) was recorded: another runner follows it.`,
  );
}

/**
 * The answer to this runner's submission: its task id. A runner taken over while its request was on
 * the wire finds its job uncertain (the takeover's doing): the answer is still recorded, the task
 * unheld for a live runner to follow, so that nothing paid is lost; then it stops (LeaseLostError).
 */
export async function answerJob(c: FleetContext, id: number, taskId: string): Promise<string | undefined> {
  const now = c.now();
  const answered = await fleetTransaction(c, async (client) => {
    // Answers naming one task wait for each other here, so that the look-up below sees the one
    // recorded first (READ COMMITTED: each statement reads what was committed before it began).
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text || ' ' || $2, 0))", [
      c.serviceId,
      taskId,
    ]);
    const holder = await client.query<{ job_key: string }>(
      "SELECT job_key FROM jobs WHERE service_id = $1 AND task_id = $2 AND id <> $3 LIMIT 1",
      [c.serviceId, taskId, id],
    );
    if (holder.rows[0]) return { holder: holder.rows[0].job_key };
    const { rows } = await client.query<{ late: boolean }>(
      `WITH answered AS (
       UPDATE jobs SET state = 'submitted', task_id = $2, task_status = 'PreProcessing', submitted_at = $3, error = NULL,
                       runner_id = CASE WHEN state = 'submitting' THEN runner_id END, updated_at = $3
         WHERE id = $1 AND runner_id = $4 AND state IN ('submitting', 'uncertain')
         RETURNING id, runner_id IS NULL AS late),
     noted AS (
       INSERT INTO events (at, job_id, runner_id, kind, detail)
         SELECT $3::bigint, id, $4, CASE WHEN late THEN 'late-answer' ELSE 'submitted' END, $2 FROM answered)
     SELECT late FROM answered`,
      [id, taskId, now, c.runnerId],
    );
    return { rows };
  });
  if ("holder" in answered) return answered.holder;
  const { rows } = answered;
  if (rows[0] && !rows[0].late) return undefined;
  throw await leaseLostError(
    c,
    rows[0]
      ? `The service's answer to its submission (task ${taskId}) was recorded: another runner follows it.`
      : `The service's answer to its submission of job ${id} (task ${taskId}) could not be recorded: the job moved on meanwhile.`,
  );
}
