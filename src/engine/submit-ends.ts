// How a claimed submission ends when it does not simply go through: the intent taken back (and a
// capped run's count given back), a refusal sorted into "try again later", "failed" or "uncertain"
// (perhaps paid for, its task id unknown), an answer with a task id another job holds, and a claim
// the state file refused because another process changed the row.
import { BACKOFF, backoffDelay } from "../backoff.js";
import { classify } from "../client/index.js";
import type { TaskIdHeldError, UnexpectedAnswerError } from "../errors/service.js";
import { resultOf, writeJobRecord } from "../output/job-record.js";
import type { EngineContext } from "./context.js";
import { LONGEST_WAIT_MS } from "./service-gate.js";

/**
 * Submissions refused for the moment (429 or 503 past the client's own retries) are tried again
 * after 1 s doubling up to 60 s; after this many in one run, the rest are left pending.
 */
const MAX_TRANSIENT_REFUSALS = 50;

/** A job claimed by this run: its intent's attempt, and what it was counted in a capped run. */
export interface Claimed {
  readonly rowId: number;
  readonly attempt: number;
  readonly cost: { readonly seconds: number; readonly credits: number | undefined } | undefined;
}

/** A claimed request not sent after all (or refused for certain): its count in a capped run given back. */
export async function refund(ctx: EngineContext, claimed: Claimed): Promise<void> {
  const { budget } = ctx;
  if (!budget || !claimed.cost) return;
  budget.giveBack(claimed.cost);
  await ctx.store.refundVideo(budget.session.id, claimed.rowId, claimed.attempt);
}

/** The intent taken back: nothing was sent. */
export async function withdraw(ctx: EngineContext, claimed: Claimed): Promise<void> {
  await ctx.store.withdrawSubmitting(claimed.rowId);
  await refund(ctx, claimed);
}

/**
 * The state file refused this run's claim on a job (see store.markSubmitting): its row moved on
 * since this run read it, which only another process writing the same state file does. Nothing is
 * sent; said, since the job's outcome is then that other process's.
 */
export async function claimLost(ctx: EngineContext, rowId: number): Promise<void> {
  const row = await ctx.store.findJobById(rowId);
  const detail = `not submitted: the state file shows this job ${row ? resultOf(row).status : "removed"}${row?.task_id ? ` (task ${row.task_id})` : ""}, changed by another process using the same state file; nothing was sent for it by this run`;
  ctx.log.warn({ rowId, state: row?.state }, detail);
  ctx.progress.event({ stage: "note", key: row?.job_key, detail });
  ctx.changed();
}

/**
 * A submission that may have reached the service, or (`speech`) a job not sent for its speech's
 * doubt: said, and recorded beside the other jobs' records.
 */
export async function markUncertain(
  ctx: EngineContext,
  rowId: number,
  message: string,
  doubt?: "speech",
): Promise<void> {
  if (doubt === "speech") await ctx.store.markSpeechDoubt(rowId, message);
  else await ctx.store.markUncertain(rowId, message);
  const row = await ctx.store.findJobById(rowId);
  if (!row) return; // a video removed before it was sent (watch): its speech alone stays uncertain
  // Claimed by another runner meanwhile: its doubt, if any, is that runner's to say.
  if (row.state !== "uncertain") return;
  ctx.progress.event({ stage: "uncertain", key: row.job_key, detail: message });
  writeJobRecord(ctx.outDir, row, ctx.wanted.isSuperseded(row));
}

/**
 * A submission answered with a task id another job holds (see TaskIdHeldError): the job uncertain
 * and never followed (it would deliver the other job's video as its own). A run sends no more to
 * such a service, but collects what was paid for, as when the credits run out (the tasks followed,
 * their videos downloaded); a watcher goes on, as for another answer the interface does not define.
 */
export async function taskIdHeld(ctx: EngineContext, error: TaskIdHeldError, rowId: number): Promise<void> {
  const { gate } = ctx;
  ctx.log.error({ job: error.job, taskId: error.taskId, holder: error.holder }, error.message);
  await markUncertain(
    ctx,
    rowId,
    `the service answered task ${error.taskId}, which ${error.holder} already holds: a fault of the service; a task may have been made for this video (perhaps paid) that reel cannot follow`,
  );
  if (ctx.options.onFatal === "stop" && !gate.fatal) {
    gate.fatal = error;
    ctx.progress.event({
      stage: "note",
      detail:
        "the service answered a task id another job holds: nothing more is submitted; tasks already submitted are followed and their videos downloaded",
    });
  }
  ctx.changed();
}

/**
 * Records why a submission did not go through. Returns "retry" (after a pause), a delay in ms
 * (a transient refusal: submit again after it), or "end".
 */
export async function recordSubmitFailure(
  ctx: EngineContext,
  key: string,
  claimed: Claimed,
  error: unknown,
): Promise<"retry" | "end" | number> {
  const { store, progress, gate } = ctx;
  const { rowId } = claimed;
  const c = classify(error, { kind: "costed" });
  const message = (error as Error).message ?? String(error);
  if (c.reason === "invalid") {
    await store.markFailed(rowId, "rejected", message);
    progress.event({ stage: "failed", key, detail: message });
  } else if (
    !c.mayHaveTakenEffect &&
    // After our own abort, only a request known never to have left is a definite refusal.
    (!ctx.signals.costed.aborted || c.reason === "not-sent")
  ) {
    // A definite refusal (401, 402, 429/503 past the retries, connection refused): nothing was
    // created, so no attempt was spent and the job goes back to pending.
    await store.markRefused(rowId, message);
    await refund(ctx, claimed);
    // It holds no generation: it waits (for the pause, the backoff, or its end), not at the service.
    ctx.progress.event({ stage: "queued", key });
    if (gate.handleFatal(error)) return ctx.options.onFatal === "pause" ? "retry" : "end";
    // A connect timeout is a refusal for certain, but not one to wait out (as before classify).
    const transient = c.verdict === "transient" && c.reason !== "connect-timeout";
    const floor = c.retryAfterMs ?? 0;
    if (transient && floor > LONGEST_WAIT_MS) {
      gate.parkSubmissions(floor);
      return "end";
    }
    if (transient && gate.transientRefusals < MAX_TRANSIENT_REFUSALS) {
      return backoffDelay(BACKOFF.submitRefused, gate.transientRefusals, { floorMs: floor });
    }
    progress.event({ stage: "failed", key, detail: message });
  } else {
    // Outcome unknown, or our own abort while the request was on the wire.
    await markUncertain(ctx, rowId, message);
    if (c.verdict === "fatal" && c.reason !== "unexpected-answer") {
      // A 403 (or no credits) on a submission: uncertain (it may come after the work was done),
      // and the key is in doubt too: the run stops (or pauses) as for a 401, instead of each job
      // meeting it in turn.
      gate.handleFatal(c.error);
    } else if (c.reason === "unexpected-answer" && ctx.options.onFatal === "stop" && !gate.fatal) {
      // Another status the interface does not define (a redirect, 400, 404, 409: a wrong base URL
      // behind a gateway): a run stops paying (a watcher goes on; its jobs are sent one by one as
      // their manifests land).
      const unexpected = c.error as UnexpectedAnswerError;
      gate.fatal = unexpected;
      ctx.log.error({ code: unexpected.code, endpoint: unexpected.endpoint }, unexpected.message);
      ctx.signals.stop.abort(unexpected);
    }
  }
  ctx.changed();
  return "end";
}
