// When to ask the service about a task next. With the bound of unfinished generations at
// the account's slots, every moment between a task's end on the service and reel noticing it is a
// slot standing idle; every poll costs the service a request. The schedule places a task's polls
// where the tasks before it ended (run-times.ts: the learned distribution of the time from a
// submission to its end, per second of video), and spends few where none end.
//
// What it minimizes: the expected notice delay, relative to the run time, plus a cost per poll:
//   J(k) = E[delay] / R + c * E[polls],   R the median time, c = POLL_COST.
// With k polls at evenly spaced quantiles Q(1/k) .. Q(1) of the distribution, the mass between two
// polls waits on average half their gap: for a spread of width W, E[delay] ~ W / (2k), and a task
// stops polling when it ends, so E[polls] ~ (k + 1) / 2. J is least at k = sqrt(W / (R * c)): a
// spread as wide as the median time (run times +-50%) gets 9 polls, a steady service 1 to 3.
// Past Q(1), the gaps grow by half each time, up to a fifth of the task's age.
// Never closer than `minMs`, never further than `maxMs` (the cap every task is polled within).
// Before anything is learned (a new service, a new model), the gap is half the time since the
// submission: a task is noticed within about a third of its run time, in a dozen polls.
import { DEFAULTS } from "../defaults.js";
import type { Distribution } from "./run-times.js";

export interface PollTiming {
  /** Never poll one task more often than this. @defaultValue 100 */
  readonly minMs: number;
  /** Never leave a task unpolled longer than this. @defaultValue 10_000 */
  readonly maxMs: number;
}

export const DEFAULT_POLL_TIMING: PollTiming = DEFAULTS.polling.timing;

/** The cost of one poll, in notice delay relative to the run time (see above). */
export const POLL_COST = 1 / 80;
/** However wide the spread, at most this many polls are planned in it. */
const MOST_PLANNED = 16;
/** Past the planned polls, each gap is this much longer than the one before ... */
const TAIL_GROWTH = 1.5;
/** ... and at most this fraction of the time since the submission. */
const TAIL_FRACTION = 0.2;
/** Unlearned: the gap is this fraction of the time since the submission. */
const UNLEARNED_FRACTION = 0.5;

/**
 * The polls of one task, as times after its submission. Stateful: `next` is asked once per poll, in
 * order.
 */
export class PollPlan {
  private index = 0;
  private tailGap: number;

  constructor(
    /** Planned times after the submission, ascending (empty: nothing learned). */
    private readonly times: readonly number[],
    private readonly timing: PollTiming,
    /** The first gap past the last planned time: the planned polls' own spacing. */
    firstTailGap = timing.minMs,
  ) {
    this.tailGap = Math.max(timing.minMs, firstTailGap);
  }

  /** The planned times (for tests and the bench). */
  get planned(): readonly number[] {
    return this.times;
  }

  /** Whether the plan comes from learned run times (else it is the unlearned schedule). */
  get learned(): boolean {
    return this.times.length > 0;
  }

  /** How long to wait before the next poll, `elapsedMs` after the submission. */
  next(elapsedMs: number): number {
    const { minMs, maxMs } = this.timing;
    const clamp = (ms: number): number => Math.min(maxMs, Math.max(minMs, Math.round(ms)));
    if (this.times.length === 0) return clamp(Math.max(0, elapsedMs) * UNLEARNED_FRACTION);
    // Planned times already passed (a slow poll, a task followed after a restart) are skipped.
    while (this.index < this.times.length && this.times[this.index]! <= elapsedMs + minMs / 2) this.index++;
    if (this.index < this.times.length) return clamp(this.times[this.index]! - elapsedMs);
    // A straggler: gaps grow, but never past a fifth of its age (it is noticed within about a
    // sixth of its lateness, and few polls: the age grows with each gap).
    const gap = Math.min(this.tailGap, Math.max(minMs, elapsedMs * TAIL_FRACTION));
    this.tailGap *= TAIL_GROWTH;
    return clamp(gap);
  }
}

/**
 * The polls of a task of `videoSeconds` whose time is distributed as `distribution` (ms per second
 * of video), or the unlearned schedule when there is none yet.
 */
export function planPolls(
  distribution: Distribution | undefined,
  videoSeconds: number,
  timing: PollTiming = DEFAULT_POLL_TIMING,
): PollPlan {
  if (!distribution || !(videoSeconds > 0)) return new PollPlan([], timing);
  const at = (p: number): number => distribution.quantile(p) * videoSeconds;
  const median = Math.max(1, at(0.5));
  const spread = at(1) - at(0);
  const k = Math.min(MOST_PLANNED, Math.max(1, Math.round(Math.sqrt(spread / median / POLL_COST))));
  const times: number[] = [];
  for (let i = 1; i <= k; i++) {
    const t = at(i / k);
    // Polls closer than minMs merge: the later one stands.
    if (times.length > 0 && t - times[times.length - 1]! < timing.minMs) times.pop();
    times.push(t);
  }
  // Past the last, the gaps start at the planned spacing: on a steady service (one poll, no spread)
  // a task a little later than any before is found within a few floors, not a quarter of its run.
  return new PollPlan(times, timing, spread / k);
}
