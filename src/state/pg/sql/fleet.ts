// The fleet's rules, each in the statement or transaction that must hold it:
//
// - Fencing. A runner's id is its fencing token. A runner found silent past its lease is marked lost
//   (stopped_at, lost_at) by the runner that takes its work over, in the same transaction as the
//   takeover; a lost runner never lives again. Every write that needs the lease (a claim, an intent
//   of speech, taking a task to follow) first updates the writer's own runner row `WHERE stopped_at
//   IS NULL` in its own statement or transaction: that row lock orders it against the takeover, so
//   either the write commits before the takeover (which then finds and sorts it) or it finds itself
//   lost and writes nothing (LeaseLostError: the runner stops).
// - Once per job. A claim is a compare-and-set on the job's row (pending, or failed locally), so of
//   two runners the second finds it moved on. No SKIP LOCKED queue: each runner walks the jobs of
//   the manifests it was given, and a lost race costs one statement.
// - One account-wide bound. Claims of one service take its row FOR UPDATE, then count its unfinished
//   jobs (submitting, submitted, and uncertain lately: see UNCERTAIN_HOLD_MS) against the smallest
//   --concurrency of its live runners, in later statements of the same transaction (READ COMMITTED
//   takes a new snapshot per statement, so the count sees every claim committed before the lock
//   was granted). Claims are serialized per service: a few milliseconds each, hundreds a second.
// - Takeover. A runner is lost when it was silent past its lease while another was heard (so an outage
//   of the database itself takes nobody for lost: see SILENT_WHILE_REACHABLE), or when it ran in
//   this runner's pid space (this boot and PID namespace, never judged by host name: goneHere) and
//   its process is gone. Submissions of a lost (or stopped) runner without an answer become uncertain, exactly
//   as after a crash; its tasks become unheld, for any live runner to follow; its speech intents
//   become uncertain and its upload intents are dropped (uploaded again if needed, no credits).
// - No runner holds the fleet's locks while silent. A claim holds its service's row, and a takeover
//   the rows of the runners it marks lost, for the few statements of one transaction. A runner paused
//   (SIGSTOP, a sleeping machine) or cut off between two of them would hold them for as long as its
//   connection lasts: every other claim, every takeover (its own included: that runner is then never
//   taken over) and every runner starting would wait on it. So the database ends such a transaction,
//   and its session, once it has waited half a lease on its runner (fleetTransaction).
import type pg from "pg";
import { ClaimLostError, JobGoneError, LeaseLostError } from "../../errors.js";
import type { LostWhy, SpeechCharge, TakeOver, VideoCharge } from "../../job-store.js";
import { namedSpeechKey, speechKey } from "../../ledger-rule.js";
import type { LeaseTiming } from "../lease.js";
import { inTransaction, type PgContext, toNumber } from "./context.js";
import { spendFromBudget } from "./named-budgets.js";
import { aliveNow, DB_NOW } from "./runners.js";
import { CLAIM, CLAIMABLE } from "../../job-state-rule.js";

/**
 * `fn` in one transaction (inTransaction) that the database rolls back, closing its session, if it
 * waits longer than half a lease for this runner's next statement (see above). The runner, when it
 * goes on, finds its statement refused with the connection gone: nothing of the transaction was
 * kept, and the pool opens a new connection for the next one.
 */
function fleetTransaction<T>(c: FleetContext, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(c, async (client) => {
    await client.query("SELECT set_config('idle_in_transaction_session_timeout', $1, true)", [idleLimit(c)]);
    return fn(client);
  });
}

/** How long a fleet transaction may wait for this runner's next statement: half a lease (see above). */
const idleLimit = (c: FleetContext): string => String(Math.max(1, Math.round(c.lease.leaseMs / 2)));

/** A writer's context: the store's, with its runner and the fleet's timing. */
export interface FleetContext extends PgContext {
  readonly runnerId: number;
  /** Where this runner's pid names it (see ../../pid-space.ts); "" unknown. */
  readonly pidSpace: string;
  readonly lease: LeaseTiming;
}

/** What a claim found: the attempt it made, the row already moved on (null), or the bound full. */
export type Claim = number | null | "full";

/** Runner ids that can no longer hold anything: stopped (closed, or marked lost). */
const GONE_RUNNERS = "SELECT id FROM runners WHERE stopped_at IS NOT NULL";

/** Touches the writer's runner row if it is not lost: the fence (see above). `$n`: the runner's id. */
function fence(c: FleetContext, n = 1): string {
  return `UPDATE runners SET ${aliveNow(2 * c.lease.heartbeatMs)} WHERE id = $${n} AND stopped_at IS NULL RETURNING id`;
}

/** The error of a runner taken over; `what`: what it no longer does. */
export async function leaseLostError(c: FleetContext, what: string): Promise<LeaseLostError> {
  // Who took over and why, if the database says: only for the message.
  type Row = { taken_by: string | null; lost_why: string | null };
  const { rows } = await c.pool
    .query<Row>("SELECT taken_by, lost_why FROM runners WHERE id = $1", [c.runnerId])
    .catch(() => ({ rows: [] as Row[] }));
  const by = rows[0]?.taken_by ? ` (taken over by runner ${rows[0].taken_by})` : "";
  const why =
    rows[0]?.lost_why === "gone"
      ? `was taken for ended: a runner of its machine found no process under its pid${by}`
      : `was silent for longer than its lease of ${c.lease.leaseMs / 1_000} s${by}`;
  return new LeaseLostError(
    `this runner (${c.runnerId} in the store) ${why}: its work is now the other runners'. ${what} It stops here; rerun reel to go on.`,
  );
}

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

/**
 * Makes this runner the one that follows job `id`'s task: true if it is now (or was already) the
 * holder, false if a live runner holds it, or it is no longer submitted.
 */
export async function holdTask(c: FleetContext, id: number): Promise<boolean> {
  const { rows } = await c.pool.query<{ held: boolean }>(
    `WITH me AS (${fence(c, 2)}),
       held AS (
         UPDATE jobs SET runner_id = $2 FROM me
           WHERE jobs.id = $1 AND jobs.state = 'submitted'
             AND (jobs.runner_id IS NULL OR jobs.runner_id = $2 OR jobs.runner_id IN (${GONE_RUNNERS}))
           RETURNING jobs.id)
     SELECT (SELECT count(*) FROM me) = 1 AS alive, (SELECT count(*) FROM held) = 1 AS held`,
    [id, c.runnerId],
  );
  const row = rows[0] as { alive: boolean; held: boolean } | undefined;
  if (!row?.alive) throw await leaseLostError(c, "It follows no more tasks.");
  return row.held;
}

/**
 * What a runner holds: a job it submits, a task it follows, and a video it made and is about to
 * download (its holder keeps it until the download is recorded, or it stops).
 */
const HELD = "(jobs.state IN ('submitting', 'submitted') OR (jobs.state = 'Success' AND jobs.file IS NULL))";

/** Of `ids`, the jobs a live runner other than this one holds (see HELD). */
export async function heldElsewhere(c: FleetContext, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await c.pool.query<{ id: string }>(
    `SELECT jobs.id FROM jobs JOIN runners ON runners.id = jobs.runner_id
       WHERE jobs.id = ANY ($1::bigint[]) AND ${HELD} AND jobs.runner_id <> $2
         AND runners.stopped_at IS NULL AND runners.heartbeat_at >= ${DB_NOW} - $3`,
    [ids, c.runnerId, c.lease.leaseMs],
  );
  return new Set(rows.map((row) => toNumber(row.id)));
}

/**
 * The fenced intent of a speech call: as markSpeechCreating (sql/speech.ts), by a runner that holds
 * its lease, recorded with it so that a takeover finds it. This runner's own intent is found as made:
 * the same intent tried again after its connection broke (pg/outage.ts).
 */
export async function startSpeech(
  c: FleetContext,
  voiceId: string,
  text: string,
  charge?: SpeechCharge,
): Promise<void> {
  const now = c.now();
  const intent = async (on: Pick<pg.PoolClient, "query">) => {
    const { rows } = await on.query<{ alive: boolean; made: boolean; fresh: boolean }>(
      `WITH me AS (${fence(c, 5)}),
         made AS (
           INSERT INTO speech (service_id, voice_id, text, state, updated_at, runner_id)
             SELECT $1, $2, $3, 'creating', $4, id FROM me
             ON CONFLICT (service_id, voice_id, text) DO UPDATE SET state = 'creating', asset_id = NULL, error = NULL, updated_at = excluded.updated_at, runner_id = excluded.runner_id
             WHERE speech.state = 'uncertain' OR (speech.state = 'creating' AND speech.runner_id = excluded.runner_id)
             RETURNING 1),
         -- Charged once: not again when this runner's own intent is tried again (its snapshot is the
         -- statement's, before the upsert).
         charged AS (
           INSERT INTO spend (session_id, speech, seconds, credits, at)
             SELECT $6::bigint, $7, 0, $8::double precision, $4 FROM made WHERE $6::bigint IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM speech WHERE service_id = $1 AND voice_id = $2 AND text = $3 AND state = 'creating'))
       SELECT (SELECT count(*) FROM me) = 1 AS alive, (SELECT count(*) FROM made) = 1 AS made,
         NOT EXISTS (SELECT 1 FROM speech WHERE service_id = $1 AND voice_id = $2 AND text = $3 AND state = 'creating') AS fresh`,
      [
        c.serviceId,
        voiceId,
        text,
        now,
        c.runnerId,
        charge?.session ?? null,
        speechKey(voiceId, text),
        charge?.credits ?? null,
      ],
    );
    const row = rows[0] as { alive: boolean; made: boolean; fresh: boolean } | undefined;
    if (!row?.alive) throw await leaseLostError(c, "No speech is made by it.");
    if (!row.made) {
      throw new ClaimLostError(
        `speech for voice ${voiceId} ("${text.slice(0, 40)}") is being or was made by another runner using this store; not paid for twice`,
      );
    }
    return row.fresh;
  };
  const named = charge?.named;
  if (!named) {
    await intent(c.pool);
    return;
  }
  // With a named budget, the intent and its spend in one transaction: no room rolls the intent back.
  await fleetTransaction(c, async (client) => {
    if (await intent(client))
      await spendFromBudget(client, now, named, { speech: namedSpeechKey(c.serviceId, voiceId, text) });
  });
}

/**
 * Marks lost the runners silent past their lease (never this one), and sorts the work this service's
 * gone runners (lost, or stopped with work left) held. One transaction; safe to run by every runner
 * at any time (each step matches only rows no live runner holds).
 */
export async function takeOverLost(c: FleetContext): Promise<TakeOver> {
  const dead = await goneHere(c);
  const result = await fleetTransaction(c, async (client) => {
    // A lost runner takes nothing over; and this one's own silence (an outage) is recorded first.
    if ((await client.query(fence(c), [c.runnerId])).rowCount !== 1) return "lost-lease" as const;
    const now = c.now();
    const { rows: lost } = await client.query<{ id: string; host: string; pid: number; lost_why: LostWhy }>(
      `UPDATE runners r SET stopped_at = ${DB_NOW}, lost_at = ${DB_NOW}, taken_by = $1,
              lost_why = CASE WHEN r.id = ANY ($3::bigint[]) THEN 'gone' ELSE 'silent' END
         WHERE r.stopped_at IS NULL AND r.id <> $1
           AND (r.id = ANY ($3::bigint[]) OR (r.heartbeat_at < ${DB_NOW} - $2 AND ${SILENT_WHILE_REACHABLE}))
         RETURNING r.id, r.host, r.pid, r.lost_why`,
      [c.runnerId, c.lease.leaseMs, dead],
    );
    const holder = `coalesce((SELECT 'runner ' || r.id || ' on ' || r.host || ' (pid ' || r.pid || ')' FROM runners r WHERE r.id = jobs.runner_id), 'its runner')`;
    const uncertain = await client.query(
      `WITH found AS (
         UPDATE jobs SET state = 'uncertain', updated_at = $2,
                error = ${holder} || ' stopped while this job was being submitted; the service may have received it'
           WHERE service_id = $1 AND state = 'submitting' AND (runner_id IS NULL OR runner_id IN (${GONE_RUNNERS}))
           RETURNING id)
       INSERT INTO events (at, job_id, runner_id, kind, detail)
         SELECT $2::bigint, id, $3, 'uncertain', 'interrupted submission, taken over' FROM found`,
      [c.serviceId, now, c.runnerId],
    );
    const released = await client.query(
      `UPDATE jobs SET runner_id = NULL
         WHERE service_id = $1 AND state = 'submitted' AND runner_id IN (${GONE_RUNNERS})`,
      [c.serviceId],
    );
    // Every task no runner follows: released now, or before (by this or another takeover, a runner
    // that stopped, a late answer), for any live runner to follow.
    const { rows: unheld } = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM jobs WHERE service_id = $1 AND state = 'submitted' AND runner_id IS NULL",
      [c.serviceId],
    );
    const speech = await client.query(
      `UPDATE speech SET state = 'uncertain', updated_at = $2,
              error = 'the runner making this speech stopped before its answer was recorded'
         WHERE service_id = $1 AND state = 'creating' AND (runner_id IS NULL OR runner_id IN (${GONE_RUNNERS}))`,
      [c.serviceId, now],
    );
    const uploads = await client.query(
      `DELETE FROM upload_intents
         WHERE service_id = $1 AND (runner_id IS NULL OR runner_id IN (${GONE_RUNNERS}))`,
      [c.serviceId],
    );
    return {
      lost: lost.map((row) => ({ id: toNumber(row.id), host: row.host, pid: row.pid, why: row.lost_why })),
      uncertain: uncertain.rowCount ?? 0,
      released: released.rowCount ?? 0,
      unheld: toNumber(unheld[0]?.n ?? 0),
      speech: speech.rowCount ?? 0,
      uploads: uploads.rowCount ?? 0,
    };
  });
  if (result === "lost-lease") throw await leaseLostError(c, "It takes no work over.");
  return result;
}

/**
 * A runner `r` is taken for lost only if its silence was heard: some other runner `s` (this one, or
 * any other, stopped since or not) was heard without a gap for a whole lease after r's last beat
 * (s.connected_at: see runners.ts aliveNow). A database that restarted, or a network cut that kept
 * every runner away, silences the whole fleet at once: nobody heard that, and nobody is taken over
 * when it comes back; the runners reconnect and go on. $2 is the lease.
 */
const SILENT_WHILE_REACHABLE = `EXISTS (SELECT 1 FROM runners s WHERE s.id <> r.id
    AND s.heartbeat_at - greatest(r.heartbeat_at, s.connected_at) >= $2)`;

/**
 * The runners of this pid space (this boot, this PID namespace: see ../../pid-space.ts) that have not
 * stopped but whose process is gone (killed with kill -9, or crashed): lost at once, without waiting
 * out their lease, so that a rerun on the machine of a run that was killed goes on at once. Only
 * where the process surely is gone (ESRCH); a process alive (or another user's: EPERM) keeps its
 * lease. Never by host name: machines (or containers) that share one see nothing of each other's
 * processes, and a live runner there must not be taken for gone; the lease decides for them, and
 * for every runner where the pid space is unknown.
 */
async function goneHere(c: FleetContext): Promise<number[]> {
  if (c.pidSpace === "") return [];
  const { rows } = await c.pool.query<{ id: string; pid: number }>(
    "SELECT id, pid FROM runners WHERE pid_space = $1 AND stopped_at IS NULL AND id <> $2",
    [c.pidSpace, c.runnerId],
  );
  return rows.filter((row) => !processAlive(row.pid)).map((row) => toNumber(row.id));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * A runner that stops lets go of what it holds (another runner, or the next run, follows its tasks
 * and downloads its videos) and records its stop, in one statement.
 */
export async function stopHolding(c: FleetContext): Promise<void> {
  await c.pool.query(
    `WITH released AS (UPDATE jobs SET runner_id = NULL WHERE runner_id = $1 AND ${HELD})
     UPDATE runners SET stopped_at = ${DB_NOW} WHERE id = $1 AND stopped_at IS NULL`,
    [c.runnerId],
  );
}
