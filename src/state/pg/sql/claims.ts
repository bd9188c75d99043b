// The claim of a submission and its answer, on the shared store: the rules they keep (once per job,
// one account-wide bound, fencing) are told at the top of fleet.ts.
import { JobGoneError } from "../../../errors/state.js";
import type { VideoCharge } from "../../job-store.js";
import { toNumber } from "./context.js";
import { namedSpendSql, noticingRefusal, REFUSED_SQL, refusalOf } from "./named-budgets.js";
import { aliveNow } from "./runners.js";
import { CLAIM, CLAIMABLE } from "../../job-state-rule.js";

import { type FleetContext, leaseLostError } from "./fleet.js";

/** What a claim found: the attempt it made, the row already moved on (null), or the bound full. */
export type Claim = number | null | "full";

/**
 * The intent of a submission, fenced and bounded (see fleet.ts). Throws LeaseLostError if this
 * runner was taken over, JobGoneError if the row is gone.
 */
export async function claimJob(c: FleetContext, id: number, charge?: VideoCharge): Promise<Claim> {
  const result = await claimIn(c, id, c.now(), charge);
  if (result === "lost-lease") throw await leaseLostError(c, "Nothing more is submitted by it.");
  // No intent, no request: a job whose row is gone must never be paid for unrecorded.
  if (result === "gone") throw new JobGoneError(`job ${id} is not in the state file; it was not submitted`);
  return result;
}

/**
 * The claim, in one statement: the service's row taken (FOR UPDATE) only if the bound has room as
 * the statement starts (a claim that finds it full takes no lock at all: while the bound is full,
 * most claims are those), the bound counted again under it (reel_bound_full, migration 16: a fresh
 * read, so every claim committed before the lock was given is counted), the fence (the service's row
 * first, then the runner's: the order every claim takes them in), and the compare-and-set of the job
 * with its event and charge. The service's row is held while the statement runs and no longer: no
 * round trip of a runner, slow or paused, keeps another's claim or the write that frees a slot waiting.
 * With a named budget, its spend too (namedSpendSql): a charge it has no room for undoes the whole
 * statement (BudgetReachedError, its last share told by noticingRefusal).
 */
async function claimIn(
  c: FleetContext,
  id: number,
  now: number,
  charge: VideoCharge | undefined,
): Promise<Claim | "lost-lease" | "gone"> {
  const named = charge?.named;
  const spend = named
    ? `,
       named_charge AS (SELECT id AS job_id, attempts AS attempt, NULL::text AS speech FROM claimed),
       ${namedSpendSql({ budget: "$12::bigint", seconds: "$13::double precision", credits: "$14::double precision", at: "$2::bigint", runner: "$3::bigint" })}`
    : "";
  const { rows } = await c.pool
    .query<{
      room: boolean;
      fenced: string;
      attempts: number | null;
      present: boolean;
    }>(
      `WITH locked AS (
         SELECT id FROM services WHERE id = $9 AND NOT reel_bound_full($9, $10, $11) FOR UPDATE),
       room AS (SELECT NOT reel_bound_full($9, $10, $11) AS ok FROM locked),
       fenced AS (
         UPDATE runners SET ${aliveNow(2 * c.lease.heartbeatMs)}
           WHERE id = $3 AND stopped_at IS NULL AND (SELECT ok FROM room) RETURNING id),
       claimed AS (
         UPDATE jobs SET ${CLAIM}, runner_id = $3, updated_at = $2
           WHERE id = $1 AND ${CLAIMABLE} AND EXISTS (SELECT 1 FROM fenced)
           RETURNING id, attempts),
       noted AS (INSERT INTO events (at, job_id, runner_id, kind) SELECT $2::bigint, id, $3, 'submitting' FROM claimed),
       charged AS (
         INSERT INTO spend (session_id, job_id, attempt, model, resolution, seconds, credits, at)
           SELECT $4::bigint, id, attempts, $5, $6, $7, $8::double precision, $2::bigint FROM claimed WHERE $4::bigint IS NOT NULL
           ON CONFLICT (session_id, job_id, attempt) WHERE job_id IS NOT NULL DO NOTHING)${spend}
       SELECT coalesce((SELECT ok FROM room), false) AS room, (SELECT count(*) FROM fenced) AS fenced,
              (SELECT attempts FROM claimed) AS attempts, EXISTS (SELECT 1 FROM jobs WHERE id = $1) AS present
              ${named ? `, ${REFUSED_SQL}` : ""}`,
      [
        id,
        now,
        c.runnerId,
        charge?.session ?? null,
        charge?.model ?? null,
        charge?.resolution ?? null,
        charge?.seconds ?? 0,
        charge?.credits ?? null,
        c.serviceId,
        c.lease.uncertainHoldMs,
        c.lease.leaseMs,
        ...(named ? [named.budget, named.seconds, named.credits] : []),
      ],
    )
    .catch(async (error: unknown) => {
      if (!named) throw error;
      return noticingRefusal(c, c.runnerId)(refusalOf(error, named));
    });
  const row = rows[0]!;
  if (!row.room) return "full";
  if (toNumber(row.fenced) !== 1) return "lost-lease";
  if (row.attempts !== null) return row.attempts;
  return row.present ? null : "gone";
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
 * The answer to this runner's submission: its task id, in one statement. reel_task_holder
 * (migration 19) first waits for any other answer naming the same task and says which job holds
 * it, if one does: then nothing is written and that job's key is returned. A runner taken over
 * while its request was on the wire finds its job uncertain (the takeover's doing): the answer is
 * still recorded, the task unheld for a live runner to follow, so that nothing paid is lost; then
 * it stops (LeaseLostError). One statement holds the task's lock for no round trip of a runner.
 */
export async function answerJob(c: FleetContext, id: number, taskId: string): Promise<string | undefined> {
  const now = c.now();
  const { rows } = await c.pool.query<{ holder: string | null; late: boolean | null }>(
    `WITH holder AS (SELECT reel_task_holder($5, $2, $1) AS job_key),
     answered AS (
       UPDATE jobs SET state = 'submitted', task_id = $2, task_status = 'PreProcessing', submitted_at = $3, error = NULL,
                       runner_id = CASE WHEN state = 'submitting' THEN runner_id END, updated_at = $3
         WHERE id = $1 AND runner_id = $4 AND state IN ('submitting', 'uncertain')
           AND (SELECT job_key FROM holder) IS NULL
         RETURNING id, runner_id IS NULL AS late),
     noted AS (
       INSERT INTO events (at, job_id, runner_id, kind, detail)
         SELECT $3::bigint, id, $4, CASE WHEN late THEN 'late-answer' ELSE 'submitted' END, $2 FROM answered)
     SELECT (SELECT job_key FROM holder) AS holder, (SELECT late FROM answered) AS late`,
    [id, taskId, now, c.runnerId, c.serviceId],
  );
  const { holder, late } = rows[0]!;
  if (holder !== null) return holder;
  if (late === false) return undefined;
  throw await leaseLostError(
    c,
    late
      ? `The service's answer to its submission (task ${taskId}) was recorded: another runner follows it.`
      : `The service's answer to its submission of job ${id} (task ${taskId}) could not be recorded: the job moved on meanwhile.`,
  );
}
