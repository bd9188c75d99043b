// How long the work left should take: a pure function of what was learned of the service's run
// times (engine/run-times.ts, the same samples the poll schedule plans from: per model and
// resolution, the time from a submission to its task's end per second of video), the tasks in
// flight (their age and length), the jobs left (their lengths) and the bound of generations at once.
//
// The jobs left are laid out as the engine sends them: longest first, each into the slot that frees
// first, for the learned mean time. A task in flight has the time the learned tasks that outlasted
// its age took, less its age; one older than any learned task (a straggler) is given a little more
// the longer it runs, so the estimate goes on moving rather than standing at a figure it has already
// passed. A slot is held a little longer than the service takes (the submission, the end noticed at
// a poll after it): the run's own overhead is added, in proportion, since the poll gaps are.
import type { Distribution, LearnedTimes, RunKey } from "../engine/run-times.js";

export interface EtaJob {
  readonly key: RunKey;
  /** Seconds of video. */
  readonly seconds: number;
}

export interface EtaTask extends EtaJob {
  /** Time since its submission. */
  readonly ageMs: number;
}

export interface EtaInput {
  readonly learned: LearnedTimes;
  /** Tasks on the service (each holds one of the `concurrency` slots). */
  readonly inFlight: readonly EtaTask[];
  /** Jobs not submitted yet. */
  readonly queue: readonly EtaJob[];
  /** Generations unfinished at once (--concurrency). */
  readonly concurrency: number;
  /**
   * How much longer a task holds its slot than the service takes to make it (the submission's round
   * trip, the end noticed at a poll after it), as a fraction of that time: this run's, so far.
   * @defaultValue 0
   */
  readonly overhead?: number;
  /** Each download under way: the time since it started. @defaultValue none */
  readonly downloading?: readonly number[];
  /** How long a download takes (this run's mean so far), after each task's end; unknown until one ended. */
  readonly downloadMs?: number;
}

/** A straggler's remaining time grows by this much per millisecond it is late. */
const STRAGGLER_GROWTH = 0.5;
/** However close a task is to its expected end, at least this fraction of its median time is left. */
const LEAST_LEFT = 0.02;

/**
 * Milliseconds until the last of the work ends; 0 when none is left; undefined while a job has
 * nothing learned to go by (the display says it is learning).
 */
export function remainingMs(input: EtaInput): number | undefined {
  const { learned, concurrency } = input;
  const bound = Math.max(1, concurrency);
  const overhead = Math.max(0, input.overhead ?? 0);
  const ends: number[] = [];
  for (const task of input.inFlight) {
    const d = learned.distribution(task.key, task.seconds);
    if (!d) return undefined;
    ends.push(taskLeft(d, task.seconds, task.ageMs) + overhead * d.mean() * task.seconds);
  }
  ends.sort((a, b) => a - b);
  // More tasks in flight than the bound (a rerun with a lower --concurrency): a job left starts only
  // once fewer than `bound` remain, at the ends of the last `bound` of them.
  const slots = ends.slice(Math.max(0, ends.length - bound));
  while (slots.length < bound) slots.push(0);
  let last = ends.at(-1) ?? 0;
  const queue = [...input.queue].sort((a, b) => b.seconds - a.seconds);
  for (const job of queue) {
    const d = learned.distribution(job.key, job.seconds);
    if (!d) return undefined;
    let first = 0;
    for (let i = 1; i < slots.length; i++) if (slots[i]! < slots[first]!) first = i;
    slots[first]! += d.mean() * job.seconds * (1 + overhead);
    last = Math.max(last, slots[first]!);
  }
  const downloading = input.downloading ?? [];
  const { downloadMs } = input;
  // Downloads under way, with none ended yet to tell how long one takes: nothing to go by.
  if (downloading.length > 0 && downloadMs === undefined) return undefined;
  const generating = input.inFlight.length + queue.length > 0 ? last + (downloadMs ?? 0) : 0;
  let downloads = 0;
  for (const age of downloading) downloads = Math.max(downloads, timeLeft(downloadMs!, downloadMs!, age));
  return Math.max(generating, downloads);
}

/** The time a task of `seconds`, `ageMs` after its submission, still has to go. */
function taskLeft(d: Distribution, seconds: number, ageMs: number): number {
  const above = d.meanAbove(ageMs / seconds);
  const expected = above === undefined ? d.quantile(1) * seconds : above * seconds;
  return timeLeft(expected, d.quantile(0.5) * seconds, ageMs);
}

/**
 * What is left of something expected to take `expectedMs` (`typicalMs` usually), `ageMs` in: never
 * nothing, and for one past what was expected, a little more the later it is.
 */
function timeLeft(expectedMs: number, typicalMs: number, ageMs: number): number {
  const least = LEAST_LEFT * typicalMs;
  if (ageMs <= expectedMs) return Math.max(least, expectedMs - ageMs);
  return least + STRAGGLER_GROWTH * (ageMs - expectedMs);
}
