// What reel learns of how long the service takes: per model and resolution, the time from
// a submission to its task's end, per second of video, as the recent samples themselves (a
// decayed empirical distribution), so that the poll schedule (poll-schedule.ts) can place its polls
// where tasks are likely to end, not only near the mean. Kept in the store, per service, so that a
// new run against the same service starts informed.
//
// A sample is what a poll saw: a task is found ended between two polls, so its end is taken as the
// middle of them (see observeEnd).

/** Samples kept per key: enough for the quantiles the schedule reads, few enough to sort per task. */
const KEPT = 128;
/**
 * Each newer sample weighs this much more than the one before it (weights 0.97^age): about the last
 * 40 tasks count, so a service that speeds up or slows down is followed within a few dozen tasks.
 */
const DECAY = 0.97;
/**
 * Below this many samples a key borrows its model's (then every model's) distribution. Two: a
 * service's first tasks are planned from the first that end (a spread of one sample is none).
 */
const ENOUGH = 2;
/** The stored form's version: one this reel does not know is ignored (learned again). */
const FORMAT = 1;

/** Milliseconds per second of video, recent samples weighing more. */
export class Distribution {
  private readonly sorted: readonly { readonly value: number; readonly weight: number }[];
  private readonly total: number;

  constructor(samples: readonly number[]) {
    const n = samples.length;
    this.sorted = samples
      .map((value, i) => ({ value, weight: DECAY ** (n - 1 - i) }))
      .sort((a, b) => a.value - b.value);
    this.total = this.sorted.reduce((sum, s) => sum + s.weight, 0);
  }

  /** The value below which a fraction `p` (0..1) of the weight lies. */
  quantile(p: number): number {
    const target = Math.min(1, Math.max(0, p)) * this.total;
    let seen = 0;
    for (const s of this.sorted) {
      seen += s.weight;
      if (seen >= target - 1e-12) return s.value;
    }
    return this.sorted[this.sorted.length - 1]!.value;
  }

  /** The weighted mean. */
  mean(): number {
    return this.sorted.reduce((sum, s) => sum + s.value * s.weight, 0) / this.total;
  }

  /** The weighted mean of the values above `value`, or undefined when none is. */
  meanAbove(value: number): number | undefined {
    let sum = 0;
    let weight = 0;
    for (const s of this.sorted) {
      if (s.value <= value) continue;
      sum += s.value * s.weight;
      weight += s.weight;
    }
    return weight === 0 ? undefined : sum / weight;
  }
}

export interface RunKey {
  readonly model: string;
  readonly resolution: string | undefined;
}

/** What the live display's ETA reads of what was learned (the engine alone adds to it). */
export type LearnedTimes = Pick<RunTimes, "distribution">;

export class RunTimes {
  /** Samples per key ("model", "model@resolution", "model@resolution#seconds"), oldest first. */
  private readonly samples = new Map<string, number[]>();
  private changed = false;

  /**
   * A task of `videoSeconds` was last seen unfinished `lastUnfinishedMs` after its submission, and
   * ended by `seenEndedMs`: its end is taken in the middle. Unbiased for an end anywhere in the
   * interval; a wide interval (polls far apart, while nothing is learned) only widens what is
   * learned, which then places more polls and narrows the intervals that follow. (The conditional
   * mean under what was learned so far would be sharper, but it pulls every sample towards the
   * first ones: the learned spread collapses, and the schedule polls too late. Weighing samples
   * by their precision was tried too: the ends polled tightly, inside the window, outweighed the
   * stragglers, polled far apart; the window narrowed, and the 95th percentile of the notice delay
   * went from 24% to 41% of the run time, bench/poll-bench.js jitter.) `plannedMs`: when the poll
   * that saw it ended was meant to leave (it leaves later on a busy event loop). Returns the end
   * taken, after the submission.
   */
  observeEnd(
    key: RunKey,
    lastUnfinishedMs: number,
    seenEndedMs: number,
    videoSeconds: number,
    plannedMs = seenEndedMs,
  ): number {
    // A task seen ended at its first poll ended after the earliest end learned, not at its submission:
    // counted from there, or every task ending before the first poll would teach an earlier one.
    const earliest = (this.distribution(key, videoSeconds)?.quantile(0) ?? 0) * videoSeconds;
    const first = lastUnfinishedMs <= 0;
    const from = first ? Math.min(earliest, seenEndedMs) : lastUnfinishedMs;
    // Its end is known only to precede that poll, whose lateness is no part of the run time: counted
    // in, each such sample lies above the earliest learned, so the earliest only ever rises, and a
    // run of 40,000 instant tasks learned to poll each a second after its submission.
    const to = first ? Math.min(seenEndedMs, Math.max(from, plannedMs)) : seenEndedMs;
    const endMs = (from + to) / 2;
    this.observe(key, endMs, videoSeconds);
    return endMs;
  }

  /** A task of `videoSeconds` ended `totalMs` after its submission. */
  observe(key: RunKey, totalMs: number, videoSeconds: number): void {
    if (!(videoSeconds > 0) || !(totalMs > 0)) return;
    const value = totalMs / videoSeconds;
    for (const name of [key.model, keyName(key), lengthName(key, videoSeconds), ALL]) {
      const list = this.samples.get(name) ?? [];
      list.push(value);
      if (list.length > KEPT) list.splice(0, list.length - KEPT);
      this.samples.set(name, list);
    }
    this.changed = true;
  }

  /**
   * The distribution for a video of `videoSeconds` of `key`: that of videos of the same length when
   * known well enough (a constant part of every task's time, its submission and PreProcessing,
   * weighs more per second on a short video: scaled from other lengths, it would misplace the
   * polls of a long one), else the key's, its model's, every model's.
   */
  distribution(key: RunKey, videoSeconds?: number): Distribution | undefined {
    const names = [keyName(key), key.model, ALL];
    if (videoSeconds !== undefined) names.unshift(lengthName(key, videoSeconds));
    for (const name of names) {
      const list = this.samples.get(name);
      if (list && list.length >= ENOUGH) return new Distribution(list);
    }
    return undefined;
  }

  /** Whether samples came in since the last `takeChanges` (what to save). */
  takeChanges(): boolean {
    const was = this.changed;
    this.changed = false;
    return was;
  }

  toJSON(): string {
    return JSON.stringify({ format: FORMAT, samples: Object.fromEntries(this.samples) });
  }

  /** The stored form; anything unreadable (damaged, another format) starts from nothing. */
  static fromJSON(text: string | undefined): RunTimes {
    const times = new RunTimes();
    if (text === undefined) return times;
    try {
      const data = JSON.parse(text) as { format?: unknown; samples?: unknown };
      if (data.format !== FORMAT || typeof data.samples !== "object" || data.samples === null) return times;
      for (const [name, list] of Object.entries(data.samples as Record<string, unknown>)) {
        if (!Array.isArray(list)) continue;
        const values = list.filter((v): v is number => typeof v === "number" && v > 0 && Number.isFinite(v));
        if (values.length > 0) times.samples.set(name, values.slice(-KEPT));
      }
    } catch {
      // learned again
    }
    return times;
  }
}

const ALL = "*";

function lengthName(key: RunKey, videoSeconds: number): string {
  return `${keyName(key)}#${videoSeconds}`;
}

function keyName(key: RunKey): string {
  return key.resolution === undefined ? key.model : `${key.model}@${key.resolution}`;
}
