// What the frame reads off the live state (live-state.ts): how many jobs are in each place, the run's
// totals, whether work is left, and how long it should take.
import { remainingMs } from "./eta.js";
import { FINAL, HOLDING, type JobPlace, type LiveState } from "./live-state.js";

/** How many of the run's jobs are in each place. */
export function countPlaces(state: LiveState): Record<JobPlace, number> {
  const counts: Record<JobPlace, number> = {
    waiting: 0,
    preparing: 0,
    queued: 0,
    submitting: 0,
    PreProcessing: 0,
    Pending: 0,
    Running: 0,
    downloading: 0,
    left: 0,
    done: 0,
    failed: 0,
    uncertain: 0,
    doneElsewhere: 0,
    doneBefore: 0,
    failedBefore: 0,
    uncertainBefore: 0,
  };
  for (const view of state.jobs.values()) counts[view.place]++;
  return counts;
}

export interface Totals {
  total: number;
  /** Ended: in this run (any way), or before it. */
  finished: number;
  before: number;
  /** Ended in an earlier run another way than done (a failure not retried). */
  endedBefore: number;
  /** Made by other runners of the fleet during this run. */
  elsewhere: number;
  /** This run's (a watch: this session's, with the ends its jobs no longer show). */
  done: number;
  failed: number;
  uncertain: number;
}

export function totalsOf(state: LiveState): Totals {
  const n = countPlaces(state);
  const endedBefore = n.failedBefore + n.uncertainBefore;
  const totals: Totals = {
    total: state.jobs.size,
    finished: n.done + n.failed + n.uncertain + n.doneBefore + endedBefore + n.doneElsewhere,
    before: n.doneBefore,
    endedBefore,
    elsewhere: n.doneElsewhere,
    done: n.done,
    failed: n.failed,
    uncertain: n.uncertain,
  };
  for (const end of state.replaced) totals[end.place]++;
  return totals;
}

/** Whether some job of the run is still to be made in this run. */
export function workLeft(state: LiveState): boolean {
  for (const view of state.jobs.values()) if (!FINAL.has(view.place) && view.place !== "left") return true;
  return false;
}

/**
 * How long the work left should take (see eta.ts), from what the engine learned of the run times;
 * undefined while there is nothing to go by.
 */
export function etaMs(state: LiveState, now: number): number | undefined {
  if (!state.learned) return undefined;
  const inFlight = [];
  const queue = [];
  const downloading = [];
  for (const view of [...state.jobs.values(), ...state.others.values()]) {
    const facts = view.facts;
    if (!facts) continue; // a task of an earlier run no manifest lists: its length is not known here
    const key = { model: facts.model, resolution: facts.resolution };
    if (HOLDING.has(view.place)) {
      inFlight.push({ key, seconds: facts.seconds, ageMs: now - (view.submittedAt ?? view.since) });
    } else if (view.place === "waiting" || view.place === "preparing" || view.place === "queued") {
      if (state.jobs.has(facts.key)) queue.push({ key, seconds: facts.seconds });
    } else if (view.place === "downloading") {
      downloading.push(now - view.since);
    }
  }
  const { sumMs, count } = state.downloads;
  return remainingMs({
    learned: state.learned,
    inFlight,
    queue,
    downloading,
    concurrency: state.concurrency,
    ...(count > 0 ? { downloadMs: sumMs / count } : {}),
    overhead: median(state.overheads),
  });
}

/** The median of `values`, 0 of none: one slow turn of the event loop does not move it. */
function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
