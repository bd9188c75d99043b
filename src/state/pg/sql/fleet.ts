// The fleet's rules, each in the statement or transaction that must hold it (the claim and its
// answer are in claims.ts, the takeover in takeover.ts; what they share is here):
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
// - One account-wide bound. A claim of one service takes its row FOR UPDATE, then counts its
//   unfinished jobs (submitting, submitted, and uncertain lately: see UNCERTAIN_HOLD_MS) against the
//   smallest --concurrency of its live runners, in one statement (claims.ts): the count is a
//   VOLATILE function (migration 16), whose read starts after the lock was granted, so it sees
//   every claim committed before. Claims are serialized per service for the time one statement runs
//   on the server, no round trip of a runner in between.
// - Takeover. A runner is lost when it was silent past its lease while another was heard (so an outage
//   of the database itself takes nobody for lost: see SILENT_WHILE_REACHABLE), or when it ran in
//   this runner's pid space (this boot and PID namespace, never judged by host name: goneHere) and
//   its process is gone. Submissions of a lost (or stopped) runner without an answer become uncertain, exactly
//   as after a crash; its tasks become unheld, for any live runner to follow; its speech intents
//   become uncertain and its upload intents are dropped (uploaded again if needed, no credits).
// - No runner holds the fleet's locks while silent. A claim holds its service's row (and its named
//   budget's) for its one statement, and a takeover the
//   rows of the runners it marks lost, for the few statements of one transaction. A runner paused
//   (SIGSTOP, a sleeping machine) or cut off between two of them would hold them for as long as its
//   connection lasts: every other claim, every takeover (its own included: that runner is then never
//   taken over) and every runner starting would wait on it. So the database ends such a transaction,
//   and its session, once it has waited half a lease on its runner (fleetTransaction).
import type pg from "pg";
import { ClaimLostError, LeaseLostError } from "../../../errors/state.js";
import type { SpeechCharge } from "../../job-store.js";
import { namedSpeechKey, speechKey } from "../../ledger-rule.js";
import type { LeaseTiming } from "../lease.js";
import { inTransaction, type PgContext, toNumber } from "./context.js";
import { noticingRefusal, spendOnSpeech } from "./named-budgets.js";
import { aliveNow, DB_NOW } from "./runners.js";

/**
 * `fn` in one transaction (inTransaction) that the database rolls back, closing its session, if it
 * waits longer than half a lease for this runner's next statement (see above). The runner, when it
 * goes on, finds its statement refused with the connection gone: nothing of the transaction was
 * kept, and the pool opens a new connection for the next one.
 */
export function fleetTransaction<T>(c: FleetContext, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(c, async (client) => {
    await client.query("SELECT set_config('idle_in_transaction_session_timeout', $1, true)", [idleLimit(c)]);
    return fn(client);
  });
}

/** How long a fleet transaction may wait for this runner's next statement: half a lease (see above). */
export const idleLimit = (c: FleetContext): string => String(Math.max(1, Math.round(c.lease.leaseMs / 2)));

/** A writer's context: the store's, with its runner and the fleet's timing. */
export interface FleetContext extends PgContext {
  readonly runnerId: number;
  /** Where this runner's pid names it (see ../../pid-space.ts); "" unknown. */
  readonly pidSpace: string;
  readonly lease: LeaseTiming;
}

/** What a claim found: the attempt it made, the row already moved on (null), or the bound full. */
/** Runner ids that can no longer hold anything: stopped (closed, or marked lost). */
export const GONE_RUNNERS = "SELECT id FROM runners WHERE stopped_at IS NOT NULL";

/** Touches the writer's runner row if it is not lost: the fence (see above). `$n`: the runner's id. */
export function fence(c: FleetContext, n = 1): string {
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
      await spendOnSpeech(client, now, named, namedSpeechKey(c.serviceId, voiceId, text), c.runnerId);
  }).catch(noticingRefusal(c, c.runnerId));
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
