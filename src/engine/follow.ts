// Following a task on the service: polled (in its generation slot) until it is final, the engine
// stops, or its deadline passes. Each change of status is recorded; answers that cannot be read are
// asked again with backoff, a bounded number of times.
import { backoffDelay, failedPollBackoff } from "../backoff.js";
import { classify } from "../client/index.js";
import { formatDuration } from "../duration.js";
import { FINAL_STATUSES, type TaskStatus } from "../service-contract/api-types.js";
import type { JobRow } from "../state/job-store.js";
import { StateFileError } from "../errors/state.js";
import { type EngineContext, IN_FLIGHT } from "./context.js";
import { planPolls } from "./poll-schedule.js";
import { LONGEST_WAIT_MS } from "./service-gate.js";
import { readStoredSpec } from "../stored-spec.js";

/**
 * Answers about one task that reel cannot read (not JSON, an unknown status, a body too long), in a
 * row, before it stops following the task this run. They are asked again with backoff from the poll
 * interval's floor, doubling to its ceiling: ten span about 3 minutes against a remote service, so a
 * proxy's error page during a deploy is ridden out, and a service that only sends what reel cannot
 * read is not polled for 24 hours. The task id is kept: the next run follows it again.
 */
const MAX_UNREADABLE_ANSWERS = 10;

/** A task this process just submitted: what following it needs, without reading its row. */
export interface SubmittedTask extends Pick<
  JobRow,
  "task_id" | "task_status" | "seconds" | "job_key" | "model"
> {
  readonly resolution: string | undefined;
  /** When the service answered the submission (Date.now()): where its poll schedule starts. */
  readonly submittedAt: number;
}

/** Follows a task already on the service (job `key`), holding a generation slot as its submission did. */
export async function followInSlot(ctx: EngineContext, rowId: number, key: string): Promise<void> {
  await ctx.queues.slots.add(
    async () => {
      try {
        await follow(ctx, rowId);
      } finally {
        // Its slot of the account is free once its task ended: a job of this runner waiting may try.
        ctx.coordinator.slots.freed();
        ctx.progress.event({ stage: "released", key });
      }
    },
    { priority: IN_FLIGHT },
  );
}

/**
 * Polls a task until it is final (true), the engine stops, or its deadline passes. `known`: what the
 * caller knows of the row already (one read less per job).
 */
export async function follow(ctx: EngineContext, rowId: number, known?: SubmittedTask): Promise<boolean> {
  const { store, progress, gate, options } = ctx;
  const { pollTiming, pollDeadlineMs } = options;
  const stop = ctx.signals.stop.signal;
  const row = known ?? (await store.getJob(rowId));
  const taskId = row.task_id!;
  let status = (row.task_status ?? "PreProcessing") as TaskStatus;
  // The polls go where the tasks before it ended (poll-schedule.ts), counted from its submission: this
  // process's own, or the one the state file records (a task of an earlier run).
  const runKey = {
    model: row.model,
    resolution: "resolution" in row ? row.resolution : readStoredSpec(row.spec_json).resolution,
  };
  const submittedAt = "submittedAt" in row ? row.submittedAt : (row.submitted_at ?? Date.now());
  let plan = planPolls(ctx.runTimes.distribution(runKey, row.seconds), row.seconds, pollTiming);
  /** The wait before the next poll; a task followed while nothing was learned is planned again once something is. */
  const nextPoll = (): number => {
    if (!plan.learned)
      plan = planPolls(ctx.runTimes.distribution(runKey, row.seconds), row.seconds, pollTiming);
    return plan.next(Date.now() - submittedAt);
  };
  /** When the last poll that found the task unfinished was sent (after the submission): what it ended after. */
  let seenUnfinishedAt = submittedAt;
  /** Polls in a row that failed, and those of them whose answer could not be read. */
  let failedPolls = 0;
  let unreadable = 0;
  // From the start of this follow: a rerun days later follows the task again for a full period.
  const deadline = Date.now() + pollDeadlineMs;
  /** Stops following the task this run: its id is kept, and the next run follows it again. */
  const leave = async (why: string): Promise<false> => {
    await store.recordJobError(rowId, `${why}; task ${taskId} is kept, rerun reel to go on following it`);
    progress.event({ stage: "note", key: row.job_key, detail: `stopped following task ${taskId}: ${why}` });
    progress.event({ stage: "dropped", key: row.job_key });
    ctx.changed();
    return false;
  };
  // A task of an earlier run (or one this run submitted before a pause): where it was last seen.
  if (!known)
    progress.event({ stage: "following", key: row.job_key, detail: status, ms: Date.now() - submittedAt });
  while (!stop.aborted) {
    const delay =
      failedPolls > 0
        ? // A poll that failed is not made again at once: a service answering what reel cannot
          // read was polled 45 times a second on loopback.
          backoffDelay(failedPollBackoff(pollTiming), failedPolls)
        : nextPoll();
    /** When this poll is meant to leave: it may leave later (a busy event loop, the cap on polls). */
    const plannedAt = Date.now() + delay;
    try {
      await ctx.signals.sleep(delay);
      if (!(await gate.whenServiceUsable())) return false; // also when the engine stopped meanwhile
      // Sent when the global cap on polls lets it: the time it is asked is when it leaves.
      let askedAt = Date.now();
      const task = await ctx.queues.polls.add(() => {
        askedAt = Date.now();
        return ctx.client.getGeneration(taskId, { signal: stop });
      });
      failedPolls = 0;
      unreadable = 0;
      if (task.status !== status) {
        await store.recordTaskStatus(rowId, task.status, task.resultVideoURL, task.failReason);
        ctx.changed();
        if (task.status === "Running") {
          progress.event({ stage: "running", key: row.job_key });
        } else if (task.status === "Pending") {
          progress.event({ stage: "pending", key: row.job_key });
        }
        // Learned from this process's own submissions only: their start is known to the millisecond.
        const endMs =
          task.status === "Success" && known
            ? ctx.runTimes.observeEnd(
                runKey,
                seenUnfinishedAt - submittedAt,
                askedAt - submittedAt,
                row.seconds,
                plannedAt - submittedAt,
              )
            : undefined;
        // Said before the slot is let go: the job is no longer among those the service runs.
        if (FINAL_STATUSES.has(task.status)) {
          progress.event({
            stage: "ended",
            key: row.job_key,
            detail: task.status,
            ...(endMs === undefined ? {} : { ms: endMs }),
          });
        }
        status = task.status;
      }
      if (FINAL_STATUSES.has(status)) return true;
      seenUnfinishedAt = askedAt;
    } catch (error) {
      if (stop.aborted) return false;
      // The state file can no longer be written: stop everything (see track), not poll on forever.
      if (error instanceof StateFileError) throw error;
      if (gate.handleFatal(error)) {
        if (options.onFatal === "stop") return false;
        continue;
      }
      const c = classify(error);
      if (c.reason === "not-found") {
        await store.markFailed(rowId, "task", `task ${taskId} is unknown to the service (404)`);
        ctx.changed();
        return true;
      }
      failedPolls++;
      // An answer reel cannot read (or a fault of its own reading it): asked again, with backoff,
      // a bounded number of times.
      if (c.reason === "unreadable" || c.reason === "not-a-service-error") {
        unreadable++;
        const what = (error as Error).message;
        if (unreadable >= MAX_UNREADABLE_ANSWERS) {
          return await leave(
            `the service's answer about it could not be read ${unreadable} times in a row (${what})`,
          );
        }
        if (unreadable === 1) {
          progress.event({
            stage: "note",
            key: row.job_key,
            detail: `cannot read the service's answer about task ${taskId} (${what}): asking again with backoff, up to ${MAX_UNREADABLE_ANSWERS} times`,
          });
        }
      }
      const retryAfterMs = c.reason === "rate-limited" ? c.retryAfterMs : undefined;
      if (retryAfterMs !== undefined) {
        // A Retry-After longer than the client would sleep through: this task waits, the others go
        // on; one longer than a run waits parks it for the next run.
        if (retryAfterMs > LONGEST_WAIT_MS) {
          return await leave(
            `the service asked to wait ${formatDuration(retryAfterMs)} before asking about it again (Retry-After), longer than reel waits in a run`,
          );
        }
        progress.event({
          stage: "waiting",
          ms: retryAfterMs,
          detail: "the service asked to wait before the next poll (Retry-After)",
        });
        await ctx.signals.sleep(Math.min(retryAfterMs, deadline - Date.now()));
      }
      ctx.log.warn(
        { job: row.job_key, taskId, err: (error as Error).message },
        "poll failed; will poll again",
      );
    }
    if (Date.now() > deadline)
      return await leave(`still ${status} after ${formatDuration(pollDeadlineMs)} (--poll-deadline)`);
  }
  return false;
}
