// When to ask the service about a task next. Polls are cheap for us but not free for the service,
// and every poll that comes too late delays a download. So: rarely while a task waits its turn, a
// single poll near the moment it should finish (learned from the tasks that finished before it),
// then a tight interval until it does.
import { DEFAULTS } from "../defaults.js";
import type { TaskStatus } from "../service/api-types.js";

export interface PollTiming {
  /** Never poll one task more often than this. @defaultValue 100 */
  readonly minMs: number;
  /** Never leave a task unpolled longer than this. @defaultValue 10_000 */
  readonly maxMs: number;
}

export const DEFAULT_POLL_TIMING: PollTiming = DEFAULTS.polling.timing;

/** Learns how long the service takes per second of video, from the tasks seen running and finishing. */
export class RunRateEstimator {
  private msPerSecond: number | undefined;

  /** An exponentially weighted mean: recent tasks count more, as the service's load changes. */
  observe(runMs: number, videoSeconds: number): void {
    if (videoSeconds <= 0 || runMs <= 0) return;
    const sample = runMs / videoSeconds;
    this.msPerSecond = this.msPerSecond === undefined ? sample : 0.7 * this.msPerSecond + 0.3 * sample;
  }

  /** Expected run time of a task of `videoSeconds`, once it is Running, if known. */
  expectedRunMs(videoSeconds: number): number | undefined {
    return this.msPerSecond === undefined ? undefined : this.msPerSecond * videoSeconds;
  }
}

export interface PollContext {
  readonly status: TaskStatus;
  /** Polls already made while the task was in this status. */
  readonly pollsInStatus: number;
  /** Milliseconds since the task was first seen Running (when it is). */
  readonly runningForMs: number;
  readonly expectedRunMs: number | undefined;
}

export function nextPollDelay(context: PollContext, timing: PollTiming = DEFAULT_POLL_TIMING): number {
  const clamp = (ms: number): number => Math.min(timing.maxMs, Math.max(timing.minMs, Math.round(ms)));
  const growth = timing.minMs * 1.6 ** context.pollsInStatus;
  if (context.status !== "Running") {
    // Waiting (PreProcessing, Pending): back off geometrically, up to the cap.
    return clamp(growth);
  }
  const expected = context.expectedRunMs;
  if (expected === undefined) return clamp(growth);
  // Sleep until shortly before it is due (the estimate carries the lag of our own polls), then poll
  // 2% of the expected run time apart: a finished task waits at most that long to be noticed.
  const step = clamp(expected * 0.02);
  const untilDue = expected * 0.95 - context.runningForMs;
  return untilDue > step ? clamp(untilDue) : step;
}
