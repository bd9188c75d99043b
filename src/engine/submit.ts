// Submission: a job's assets resolved, its slot taken, the intent written (state file, then
// journal) before the request leaves, the answer recorded, and its task followed. Whether it may be
// (re)submitted at all: may-start.ts; how a claimed submission ends otherwise: submit-ends.ts.
import { BACKOFF } from "../backoff.js";
import { OutcomeUnknownError, TaskIdHeldError } from "../errors/service.js";
import { type AssetRef, type Job, type SpeechRef, toGenerationRequest } from "../manifest/index.js";
import { asDiskFailure } from "../output/atomic-write.js";
import type { Id } from "../service-contract/api-types.js";
import type { VideoCharge } from "../state/job-store.js";
import { BudgetReachedError } from "../state/named-budget.js";
import { JobGoneError } from "../errors/state.js";
import { Reservation } from "../budget/index.js";
import { BudgetStoppedError } from "../errors/budget.js";
import type { SlotTurn } from "../fleet/index.js";
import { SpeechUncertainError } from "../errors/engine.js";
import type { EngineContext } from "./context.js";
import { afterFinal } from "./deliver.js";
import { follow, type SubmittedTask } from "./follow.js";
import {
  claimLost,
  type Claimed,
  markUncertain,
  recordSubmitFailure,
  taskIdHeld,
  withdraw,
} from "./submit-ends.js";
import { FLEET_FULL } from "./progress.js";
import { speechDoubtMessage } from "./speech-doubt.js";

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
  const slotLine = ctx.coordinator.slots;
  const stopped = (): boolean => ctx.signals.stop.signal.aborted;
  /** In a fleet, why this job's last wait for a slot of the account ended (see fleet/slot-line.ts). */
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
      const delay = ctx.coordinator.sendDelay();
      if (delay !== undefined) {
        await withdraw(ctx, claimed);
        return delay;
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
        if (turn === undefined && slotLine.size > 0) return "full";
        // The claim: a compare-and-set, so whatever ran since this job's row was read, it is sent
        // by one task of one process only.
        const attempt = await claim(ctx, rowId, ctx.budget?.videoCharge(job), job.key);
        if (typeof attempt !== "number") return attempt;
        // On its way before its hold settles: the settling may stop the budget, which names it.
        ctx.sending.add(job.key);
        reservation?.spent();
        slotLine.claimed(turn);
        try {
          return await sendClaimed({ rowId, attempt, cost: reservation?.cost });
        } finally {
          ctx.sending.delete(job.key); // answered in submit(); here if it never was sent
          // The job's slot of the account is free again (its task ended, or nothing was sent), or
          // the job still holds it (stopped): either way a waiting job may try (see fleet/slot-line.ts).
          slotLine.freed();
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
      turn = await slotLine.wait();
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
 * The intent (the coordination's claim: store.markSubmitting): the attempt it makes, or why there is
 * none. A row another writer claimed first is another runner's in a fleet (waited for: "elsewhere"),
 * and said as an oddity on a state file. A row gone was forgotten by another process before it was
 * sent: a retake withdrawn (reel retake --withdraw), or in a fleet a job another watcher forgot.
 * Nothing is sent. A named budget with no room for it stops the budget ("end").
 */
async function claim(
  ctx: EngineContext,
  rowId: number,
  videoCharge: VideoCharge | undefined,
  key: string,
): Promise<number | "end" | "elsewhere" | "full"> {
  let claimed;
  try {
    claimed = await ctx.coordinator.claim(rowId, videoCharge);
  } catch (error) {
    // The named budget had no room (nothing was claimed): the run stops as at its own cap.
    if (error instanceof BudgetReachedError && ctx.budget) {
      ctx.budget.reachedShared(key, error);
      return "end";
    }
    if (!(error instanceof JobGoneError)) throw error;
    ctx.progress.event({ stage: "note", detail: `not submitted: ${error.message} (a retake withdrawn?)` });
    ctx.changed();
    return "end";
  }
  switch (claimed) {
    case "forgotten":
      return "end";
    case "lost":
      await claimLost(ctx, rowId);
      return "end";
    default:
      return claimed;
  }
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
