// Submission: whether a job may be (re)submitted, its assets resolved, its slot taken, the intent
// written (state file, then journal) before the request leaves, the answer recorded, and a refusal
// sorted into "try again later", "failed" or "uncertain" (perhaps paid for, its task id unknown).
import { BACKOFF, backoffDelay } from "../backoff.js";
import {
  classify,
  OutcomeUnknownError,
  TaskIdHeldError,
  type UnexpectedAnswerError,
} from "../client/index.js";
import { type AssetRef, type Job, type SpeechRef, toGenerationRequest } from "../manifest/index.js";
import { asDiskFailure } from "../output/atomic-write.js";
import { resultOf, writeJobRecord } from "../output/job-record.js";
import type { Id } from "../service/api-types.js";
import { BudgetReachedError, type JobRow, JobGoneError, type VideoCharge } from "../state/job-store.js";
import { BudgetStoppedError, Reservation } from "../budget/index.js";
import type { SlotTurn } from "./fleet-slots.js";
import { SpeechUncertainError } from "./assets.js";
import type { EngineContext } from "./context.js";
import { afterFinal } from "./deliver.js";
import { follow, type SubmittedTask } from "./follow.js";
import { FLEET_FULL } from "./progress.js";
import { LONGEST_WAIT_MS } from "./service-gate.js";
import { isSpeechDoubt, noSpeechInDoubt, speechDoubtMessage } from "./speech-doubt.js";
import { plural } from "../plural.js";

/**
 * Submissions refused for the moment (429 or 503 past the client's own retries) are tried again
 * after 1 s doubling up to 60 s; after this many in one run, the rest are left pending.
 */
const MAX_TRANSIENT_REFUSALS = 50;

/**
 * Whether a job that is not in flight should be (re)submitted now. `row` was read before: a retry
 * returns the job to pending by compare-and-set (markPending), never by writing over what was read.
 */
export async function mayStart(ctx: EngineContext, row: JobRow, job: Job): Promise<boolean> {
  const { store, options, progress, budget } = ctx;
  // A retry past a capped run's budget is not made pending: pending, the next run would send it
  // without being asked to retry.
  const affordable = async (): Promise<boolean> =>
    !budget || (await budget.check(job.key, budget.videoCost(job), ctx.signals.stop.signal));
  switch (row.state) {
    case "pending":
      return true;
    case "Fail":
    case "Canceled":
      if (row.fail_kind === "local") return true; // nothing was sent: free to try again
      // Once per run (per watch session): a watcher reads a manifest again at every save, and each
      // save must not spend another paid attempt on the same failing video.
      if (options.retryFailed && !ctx.retried.has(row.id)) {
        if (row.attempts < options.maxAttempts) {
          if (!(await affordable())) return false;
          ctx.retried.add(row.id);
          if (await store.markPending(row.id, "--retry-failed")) return true;
          await claimLost(ctx, row.id);
          return false;
        }
        // Else --retry-failed would seem to do nothing, as if the service kept failing.
        progress.event({
          stage: "note",
          key: row.job_key,
          detail: `not retried: ${row.attempts} of ${plural(options.maxAttempts, "attempt")} used (--max-attempts N allows more)`,
        });
      }
      return false;
    case "uncertain":
      // In doubt for its speech alone, which is in doubt no longer: nothing of it was ever sent, so
      // it goes as a pending job does, with no flag (see speech-doubt.ts).
      if (
        isSpeechDoubt(row) &&
        (await noSpeechInDoubt(job, (voiceId, text) => store.findSpeech(voiceId, text)))
      ) {
        if (await store.markPending(row.id, "its speech is known")) {
          progress.event({
            stage: "note",
            key: row.job_key,
            detail: "its speech is recorded now, and nothing of this video was sent: it is sent now",
          });
          return true;
        }
        // Another runner of a fleet made it pending first: the claim, a compare-and-set, decides
        // which one sends it.
        if (store.fleet && (await store.findJobById(row.id))?.state === "pending") return true;
        await claimLost(ctx, row.id);
        return false;
      }
      if (options.resubmitUncertain && (await affordable())) {
        if (await store.markPending(row.id, "--resubmit-uncertain")) return true;
        await claimLost(ctx, row.id);
      }
      return false;
    default:
      return false;
  }
}

/** The assets a job's request refers to: its source image, and each chunk's audio. */
export function refsOf(job: Job): (AssetRef | SpeechRef)[] {
  const refs: (AssetRef | SpeechRef)[] = [];
  if (job.spec.source) refs.push(job.spec.source);
  for (const chunk of job.spec.chunks) if (chunk.audio) refs.push(chunk.audio);
  return refs;
}

/** How many speech calls the job needs that the store has no speech of yet (each line once). */
async function speechToMake(ctx: EngineContext, job: Job): Promise<number> {
  const lines = new Map<string, SpeechRef>();
  for (const ref of refsOf(job)) if (ref.kind === "speech") lines.set(`${ref.voiceId}\n${ref.text}`, ref);
  let calls = 0;
  for (const ref of lines.values()) {
    if ((await ctx.store.findSpeech(ref.voiceId, ref.text))?.state !== "done") calls++;
  }
  return calls;
}

async function resolveRefs(
  ctx: EngineContext,
  job: Job,
  reservation: Reservation | undefined,
): Promise<Map<AssetRef | SpeechRef, Id>> {
  const refs = refsOf(job);
  // Every call is waited for, even once one failed: a speech call still retrying may be paid for,
  // and the run must not end before its answer is recorded (it would be found uncertain).
  const settled = await Promise.allSettled(
    refs.map((ref) => ctx.resolver.resolve(ref, reservation, job.key)),
  );
  const errors = settled.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (errors.length > 0) {
    // One that may have cost credits decides what the job becomes (uncertain, not a plain failure).
    throw (
      errors.find((e) => e instanceof SpeechUncertainError || e instanceof OutcomeUnknownError) ?? errors[0]
    );
  }
  return new Map(refs.map((ref, i) => [ref, (settled[i] as PromiseFulfilledResult<Id>).value]));
}

/**
 * How a submission ended: its task reached a final state, or it did not (stopped, withdrawn, parked,
 * refused, failed), or another runner of the fleet holds the job (it claimed it first).
 */
export type SubmitEnd = "final" | "not-final" | "elsewhere";

/** Submits the job and follows its task. */
export async function submitAndFollow(ctx: EngineContext, job: Job, rowId: number): Promise<SubmitEnd> {
  // A capped run holds the video's cost from here to its claim (see Reservation), with the speech
  // it needs that is not made yet: as the advice at a stop counts what is left (leftUnsent), so a
  // rerun with that cap fits exactly.
  if (ctx.budget?.refusesShared(job)) return "not-final";
  const reservation =
    ctx.budget &&
    new Reservation(ctx.budget, job.key, ctx.budget.videoCost(job), await speechToMake(ctx, job));
  try {
    return await submitLoop(ctx, job, rowId, reservation);
  } finally {
    reservation?.release();
  }
}

async function submitLoop(
  ctx: EngineContext,
  job: Job,
  rowId: number,
  reservation: Reservation | undefined,
): Promise<SubmitEnd> {
  const { store, gate, wanted } = ctx;
  const stopped = (): boolean => ctx.signals.stop.signal.aborted;
  /** In a fleet, why this job's last wait for a slot of the account ended (see fleet-slots.ts). */
  let turn: SlotTurn | undefined;
  for (;;) {
    // `fatal`: the run is ending (no credits): no new upload, speech or submission. Parked: the
    // service asked for a wait longer than a run sits through; the job stays unsent for the next.
    if (gate.fatal || gate.parked || !wanted.isWanted(job) || !(await gate.whenServiceUsable()))
      return "not-final";
    // A capped run: a video that would pass the cap is not prepared (no speech made for it). Its
    // hold may wait for others to settle: the run may have changed meanwhile.
    if (reservation && !(await reservation.hold(ctx.signals.stop.signal))) return "not-final";
    if (stopped() || gate.fatal || gate.parked || !wanted.isWanted(job)) return "not-final";
    let ids: Map<AssetRef | SpeechRef, Id>;
    ctx.progress.event({ stage: "preparing", key: job.key });
    try {
      ids = await resolveRefs(ctx, job, reservation);
    } catch (error) {
      if (stopped() || error instanceof BudgetStoppedError) return "not-final";
      if (gate.handleFatal(error)) continue;
      const message = (error as Error).message;
      if (error instanceof SpeechUncertainError || error instanceof OutcomeUnknownError) {
        // Its speech's doubt (its own call, or another runner's) before this job was claimed.
        await markUncertain(ctx, rowId, speechDoubtMessage(message), "speech");
      } else {
        // Said with the failure: a Fail usually means credits spent; this one cost nothing.
        const local = `${message.replace(/\.$/, "")}; nothing was sent for this video, and the next run tries it again`;
        await store.markFailed(rowId, "local", local);
        // As a failure on the service: said, its record written, an earlier version moved aside.
        const failed = await store.findJobById(rowId);
        if (failed) await afterFinal(ctx, failed);
      }
      ctx.changed();
      return "not-final";
    }
    const body = toGenerationRequest(job.spec, (ref) => ids.get(ref)!);
    /** After the claim: the request sent, unless the run changed meanwhile. */
    async function sendClaimed(claimed: Claimed): Promise<"final" | "retry" | "end" | number> {
      // The intent took a turn to reach the disk: Ctrl-C, a withdrawn manifest or a pause may have
      // come meanwhile. Nothing was sent yet, so the intent is simply taken back.
      if (stopped() || gate.fatal || !wanted.isWanted(job) || gate.paused) {
        await withdraw(ctx, claimed);
        return gate.paused && !stopped() ? "retry" : "end";
      }
      // A runner of a fleet paused (or cut off) while its intent was on its way may have been
      // taken over meanwhile: it sends nothing on an intent it may no longer hold. Taken back, and
      // claimed again once its heartbeat confirms the lease (or it stops, having lost it).
      if (store.fleet?.leaseInDoubt()) {
        await withdraw(ctx, claimed);
        return store.fleet.heartbeatMs;
      }
      ctx.progress.event({ stage: "submitting", key: job.key });
      return submit(ctx, job, claimed, body);
    }

    ctx.progress.event({ stage: "queued", key: job.key });
    const outcome = await ctx.queues.slots.add(
      async (): Promise<"final" | "retry" | "end" | "elsewhere" | "full" | number> => {
        // Checked again here: the job may have been withdrawn, or the service paused, while it queued.
        if (stopped() || gate.fatal || gate.parked || !wanted.isWanted(job)) return "end";
        if (gate.paused) return "retry";
        // Another job found one of these assets deleted on the service while this one queued:
        // resolved again (uploaded again) rather than paid for with an asset known to be gone.
        if ([...ids.values()].some((id) => ctx.lostAssets.has(id))) return "retry";
        // A capped run's claim records the charge with the intent. Held since its preparation; if
        // not (given back after a refusal), held again before the slot, where a hold may wait.
        if (reservation && !reservation.holdNow()) return "retry";
        // Jobs of this runner already wait for a slot of the account: this one waits behind them
        // rather than claim (it would find the bound full too).
        if (turn === undefined && ctx.fleetSlots !== undefined && ctx.fleetSlots.size > 0) return "full";
        // The claim: a compare-and-set, so whatever ran since this job's row was read, it is sent
        // by one task of one process only.
        const attempt = await claim(ctx, rowId, ctx.budget?.videoCharge(job), job.key);
        if (typeof attempt !== "number") return attempt;
        // On its way before its hold settles: the settling may stop the budget, which names it.
        ctx.sending.add(job.key);
        reservation?.spent();
        ctx.fleetSlots?.claimed(turn);
        try {
          return await sendClaimed({ rowId, attempt, cost: reservation?.cost });
        } finally {
          ctx.sending.delete(job.key); // answered in submit(); here if it never was sent
          // The job's slot of the account is free again (its task ended, or nothing was sent), or
          // the job still holds it (stopped): either way a waiting job may try (see fleet-slots.ts).
          ctx.fleetSlots?.freed();
          ctx.progress.event({ stage: "released", key: job.key });
        }
      },
      // Longest first: the slots then end the batch together instead of waiting on one long straggler.
      { priority: job.seconds },
    );
    if (outcome === "full") {
      ctx.progress.event({
        stage: "waiting",
        ms: BACKOFF.fleetFull.maxMs,
        detail: FLEET_FULL,
      });
      turn = await ctx.fleetSlots!.wait();
      continue;
    }
    if (typeof outcome === "number") {
      // The service said "not now" (429, 503, refused connection) past the client's retries.
      gate.transientRefusals++;
      gate.noteWaiting(outcome);
      await ctx.signals.sleep(outcome);
      continue;
    }
    if (outcome === "elsewhere") return "elsewhere";
    if (outcome !== "retry") return outcome === "final" ? "final" : "not-final";
  }
}

/**
 * The intent (store.markSubmitting): the attempt it makes, or why there is none. A row another
 * writer claimed first is another runner's in a fleet (waited for: "elsewhere"), and said as an
 * oddity on a state file. A row gone was forgotten by another process before it was sent: a retake
 * withdrawn (reel retake --withdraw), or in a fleet a job another watcher forgot. Nothing is sent.
 * A named budget with no room for it stops the budget ("end").
 */
async function claim(
  ctx: EngineContext,
  rowId: number,
  videoCharge: VideoCharge | undefined,
  key: string,
): Promise<number | "end" | "elsewhere" | "full"> {
  const { store } = ctx;
  let attempt: number | null | "full";
  try {
    attempt = await store.markSubmitting(rowId, videoCharge);
  } catch (error) {
    // The named budget had no room (nothing was claimed): the run stops as at its own cap.
    if (error instanceof BudgetReachedError && ctx.budget) {
      ctx.budget.reachedShared(key, error);
      return "end";
    }
    if (!(error instanceof JobGoneError)) throw error;
    if (!store.fleet) {
      ctx.progress.event({ stage: "note", detail: `not submitted: ${error.message} (a retake withdrawn?)` });
      ctx.changed();
    }
    return "end";
  }
  if (attempt === "full" || typeof attempt === "number") return attempt;
  if (store.fleet) return "elsewhere";
  await claimLost(ctx, rowId);
  return "end";
}

/** A job claimed by this run: its intent's attempt, and what it was counted in a capped run. */
interface Claimed {
  readonly rowId: number;
  readonly attempt: number;
  readonly cost: { readonly seconds: number; readonly credits: number | undefined } | undefined;
}

/** A claimed request not sent after all (or refused for certain): its count in a capped run given back. */
async function refund(ctx: EngineContext, claimed: Claimed): Promise<void> {
  const { budget } = ctx;
  if (!budget || !claimed.cost) return;
  budget.giveBack(claimed.cost);
  await ctx.store.refundVideo(budget.session.id, claimed.rowId, claimed.attempt);
}

/** The intent taken back: nothing was sent. */
async function withdraw(ctx: EngineContext, claimed: Claimed): Promise<void> {
  await ctx.store.withdrawSubmitting(claimed.rowId);
  await refund(ctx, claimed);
}

/** Sends the submission whose intent the state file holds, in its slot, and follows its task. */
async function submit(
  ctx: EngineContext,
  job: Job,
  claimed: Claimed,
  body: ReturnType<typeof toGenerationRequest>,
): Promise<"final" | "retry" | "end" | number> {
  const { store, journal, signals } = ctx;
  const { rowId, attempt } = claimed;
  // The journal's copy of the intent, before the request leaves: unwritten, nothing is sent.
  try {
    journal.sent(job, attempt);
  } catch (error) {
    await withdraw(ctx, claimed);
    throw asDiskFailure(error, ctx.outDir) ?? error;
  }
  let taskId: string;
  let submittedAt = 0;
  signals.onWire++;
  try {
    try {
      ({ id: taskId } = await ctx.client.submitGeneration(body, { signal: signals.costed }));
      submittedAt = Date.now();
    } catch (error) {
      const next = await recordSubmitFailure(ctx, job.key, claimed, error);
      // Refused for certain (back to pending, or rejected): nothing was created.
      const row = await store.findJobById(rowId);
      if (row && (row.state === "pending" || row.fail_kind === "rejected")) journal.notCreated(job, attempt);
      return next;
    }
    // The task exists, paid for: in the log before anything else can fail. Its recording is not a
    // failure of the service: a store that refuses it (this runner of a fleet taken over, the store
    // unreachable past its limit, a full disk) stops the run, and the job is never marked uncertain
    // over an answer another runner may follow (fleet.ts answerJob records a late one).
    ctx.log.info({ job: job.key, taskId }, "submitted");
    const holder = await store.markSubmitted(rowId, taskId);
    if (holder !== undefined) {
      await taskIdHeld(ctx, new TaskIdHeldError(taskId, job.key, holder), rowId);
      return "end";
    }
    journal.answered(job, attempt, taskId);
    ctx.gate.serviceWorks();
    ctx.changed();
    ctx.progress.event({ stage: "submitted", key: job.key, detail: `task ${taskId}` });
  } finally {
    signals.onWire--;
    ctx.sending.delete(job.key);
  }
  const submitted: SubmittedTask = {
    task_id: taskId,
    task_status: "PreProcessing",
    seconds: job.seconds,
    job_key: job.key,
    model: job.model,
    resolution: job.spec.resolution,
    submittedAt,
  };
  return (await follow(ctx, rowId, submitted)) ? "final" : "end";
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
async function markUncertain(
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
async function taskIdHeld(ctx: EngineContext, error: TaskIdHeldError, rowId: number): Promise<void> {
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
async function recordSubmitFailure(
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
