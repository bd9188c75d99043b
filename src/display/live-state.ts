// What the live display knows, folded from the engine's events: every job of the run and where it
// is, the files being hashed or uploaded, what the engine learned of the run times (the ETA), and
// why reel waits. A plain object changed by applyEvent, so that the frame (frame.ts) is a pure
// function of it and a clock, testable without a terminal.
import type { JobFacts, ProgressEvent } from "../engine/progress.js";
import type { FleetView } from "../state/job-store.js";
import type { LearnedTimes } from "../engine/run-times.js";

/** Where a job is. Each job of the run is in exactly one place. */
export type JobPlace =
  /** Not taken up by this run yet. */
  | "waiting"
  | "preparing"
  | "queued"
  | "submitting"
  | "PreProcessing"
  | "Pending"
  | "Running"
  | "downloading"
  /** No longer worked on by this run, though not final (stopped, withdrawn, over the budget). */
  | "left"
  /** Ended in this run (this watch session). */
  | "done"
  | "failed"
  | "uncertain"
  /** Made by another runner of the fleet while this run went on (perhaps fetched again here). */
  | "doneElsewhere"
  /** Ended in an earlier run, left as it was. */
  | "doneBefore"
  | "failedBefore"
  | "uncertainBefore";

/** The places of a job holding one of the run's generation slots. */
export const HOLDING: ReadonlySet<JobPlace> = new Set(["submitting", "PreProcessing", "Pending", "Running"]);

export interface JobView {
  place: JobPlace;
  /** When it came to this place. */
  since: number;
  /** When its task was submitted (its run time counts from there). */
  submittedAt?: number;
  /**
   * When it took its slot in this run, to submit; unset unless something was learned of its run time
   * then (else its task is polled on the schedule for the unknown, and noticed late: see
   * noteOverhead).
   */
  claimedAt?: number;
  facts?: JobFacts;
  /**
   * Its video was made before this run, which only fetches it again (into another output folder, or
   * a deleted file): when that ends it is done before, as it was, not done by this run.
   */
  madeBefore?: boolean;
  /** Its video was made by another runner of the fleet during this run: see madeBefore. */
  madeElsewhere?: boolean;
}

export interface LiveState {
  readonly concurrency: number;
  startedAt: number;
  /** Each manifest's job keys (`run`: the manifests of the run as one, ""; `watch`: by name). */
  readonly manifests: Map<string, readonly string[]>;
  /** Every job of the manifests. */
  readonly jobs: Map<string, JobView>;
  /**
   * Tasks followed that no manifest lists (any more): an earlier version's, a removed video's. They
   * hold slots, and are not among the run's jobs.
   */
  readonly others: Map<string, JobView>;
  /**
   * watch: ends of this session no job shows any more (an edited video's earlier version, a video
   * removed, a failure taken up again): still this session's work, each counted once.
   */
  readonly replaced: EndReplaced[];
  readonly hashing: Set<string>;
  readonly uploads: Map<string, { size: number; sent: number }>;
  readonly speaking: Set<string>;
  /** The last wait with a duration (Retry-After, backoff, the client's retries). */
  wait: { detail: string; until: number } | undefined;
  paused: { detail: string; until: number | undefined } | undefined;
  /** The engine's learned run times (see engine/run-times.ts), once it said. */
  learned: LearnedTimes | undefined;
  /** This run's downloads ended: their time (from the task's end noticed) summed, and their count. */
  downloads: { sumMs: number; count: number };
  /**
   * How much longer each task of this run held its slot than the service took to make it, as
   * learned (see eta.ts overheadMs): the latest first.
   */
  readonly overheads: number[];
  /** What the fleet of a shared store is doing, as last read; undefined on a state file. */
  fleet: FleetView | undefined;
}

/** An end of this session's work that its job no longer shows. */
export interface EndReplaced {
  readonly key: string;
  /** The version that ended (a job edited back to it shows this end again). */
  readonly version: string | undefined;
  readonly place: "done" | "failed" | "uncertain";
}

/** Overheads kept: the latest few (the poll schedule sharpens as more is learned). */
const OVERHEADS_KEPT = 5;

export function makeLiveState(concurrency: number, now: number): LiveState {
  return {
    concurrency,
    startedAt: now,
    manifests: new Map(),
    jobs: new Map(),
    others: new Map(),
    replaced: [],
    hashing: new Set(),
    uploads: new Map(),
    speaking: new Set(),
    wait: undefined,
    paused: undefined,
    learned: undefined,
    downloads: { sumMs: 0, count: 0 },
    overheads: [],
    fleet: undefined,
  };
}

const PLACE_OF: Partial<Record<ProgressEvent["stage"], JobPlace>> = {
  preparing: "preparing",
  queued: "queued",
  submitting: "submitting",
  submitted: "PreProcessing",
  pending: "Pending",
  running: "Running",
  downloading: "downloading",
  done: "done",
  failed: "failed",
  uncertain: "uncertain",
  dropped: "left",
};

const SERVICE_PLACES: Record<string, JobPlace> = {
  PreProcessing: "PreProcessing",
  Pending: "Pending",
  Running: "Running",
};

/** Places a job comes to when it is to be sent (again). */
const TAKEN_UP: ReadonlySet<JobPlace> = new Set(["preparing", "queued", "submitting"]);

/** Places a job reaches by its work in this run. */
const THIS_RUN_FINAL: ReadonlySet<JobPlace> = new Set(["done", "failed", "uncertain"]);
/** Places a job ends in: by this run, or not by it. */
export const FINAL: ReadonlySet<JobPlace> = new Set([
  ...THIS_RUN_FINAL,
  "doneElsewhere",
  "doneBefore",
  "failedBefore",
  "uncertainBefore",
]);

export function applyEvent(state: LiveState, e: ProgressEvent, now: number): void {
  const key = e.key;
  switch (e.stage) {
    case "hashing":
      if (e.asset !== undefined) state.hashing.add(e.asset);
      return;
    case "hashed":
      if (e.asset !== undefined) state.hashing.delete(e.asset);
      return;
    case "uploading":
      if (e.asset !== undefined) state.uploads.set(e.asset, { size: e.bytes ?? 0, sent: 0 });
      return;
    case "upload-bytes": {
      const upload = e.asset === undefined ? undefined : state.uploads.get(e.asset);
      if (upload) upload.sent = e.bytes ?? upload.sent;
      return;
    }
    case "uploaded":
    case "upload-ended":
      // `uploaded` events name the file, not the hash, when no `asset` is given (older emitters).
      if (e.asset !== undefined) state.uploads.delete(e.asset);
      return;
    case "speaking":
      if (e.asset !== undefined) state.speaking.add(e.asset);
      return;
    case "speech":
    case "speech-ended":
      if (e.asset !== undefined) state.speaking.delete(e.asset);
      return;
    case "waiting":
      if (e.ms !== undefined) state.wait = { detail: e.detail ?? "", until: now + e.ms };
      return;
    case "paused":
      state.paused = { detail: e.detail ?? "", until: e.ms === undefined ? undefined : now + e.ms };
      return;
    case "resumed":
      state.paused = undefined;
      return;
    case "run-times":
      state.learned = e.learned;
      return;
    case "fleet":
      state.fleet = e.fleet;
      return;
    case "made-elsewhere": {
      // Found made when taken up: by another runner, unless this run made it (a watch takes its jobs
      // up again at each reading) or it was made before the run began.
      const view = key === undefined ? undefined : state.jobs.get(key);
      if (!view || FINAL.has(view.place) || view.madeBefore) return;
      view.madeElsewhere = true;
      moveTo(view, "doneElsewhere", now);
      return;
    }
    case "manifest":
      if (key !== undefined) setManifest(state, key, e.jobs ?? [], now);
      return;
    case "following": {
      if (key === undefined) return;
      const view = viewOf(state, key, now);
      moveTo(view, SERVICE_PLACES[e.detail ?? ""] ?? "PreProcessing", now);
      view.submittedAt = now - (e.ms ?? 0);
      return;
    }
    case "ended": {
      if (key === undefined) return;
      const view = viewOf(state, key, now);
      if (view.claimedAt !== undefined && e.ms) noteOverhead(state, (now - view.claimedAt - e.ms) / e.ms);
      view.claimedAt = undefined;
      moveTo(view, e.detail === "Success" ? "downloading" : "failed", now);
      if (view.place === "failed") state.others.delete(key);
      return;
    }
    case "released": {
      // A slot let go with no end said (a refusal to try again later, a stop): the job waits for
      // one again, or its next event says where it went.
      const view = key === undefined ? undefined : (state.jobs.get(key) ?? state.others.get(key));
      if (view && HOLDING.has(view.place)) {
        view.claimedAt = undefined;
        moveTo(view, "queued", now);
      }
      return;
    }
    case "ended-before": {
      // A watch reading a manifest again meets the failures of this session: they stay its own.
      const view = key === undefined ? undefined : state.jobs.get(key);
      if (view && !THIS_RUN_FINAL.has(view.place)) {
        moveTo(view, e.detail === "uncertain" ? "uncertainBefore" : "failedBefore", now);
      }
      return;
    }
    default: {
      const place = PLACE_OF[e.stage];
      if (place === undefined || key === undefined) return;
      const view = viewOf(state, key, now);
      // Taken up again (--retry-failed, --resubmit-uncertain): its end stays this session's work.
      if (TAKEN_UP.has(place) && state.jobs.get(key) === view) replace(state, key, view);
      if (view.place === "downloading" && place === "done") {
        state.downloads.sumMs += now - view.since;
        state.downloads.count++;
      }
      if (view.place === "doneBefore") view.madeBefore = true;
      const madeHere = !view.madeBefore && !view.madeElsewhere;
      moveTo(
        view,
        place === "done" && !madeHere ? (view.madeBefore ? "doneBefore" : "doneElsewhere") : place,
        now,
      );
      if (place === "submitting" && knownTime(state, view)) view.claimedAt = now;
      if (place === "PreProcessing") view.submittedAt = now;
      // A task no manifest lists is no more of this run's concern once it ended or was left.
      if (FINAL.has(place) || place === "left") state.others.delete(key);
    }
  }
}

/** Whether something was learned of how long `view`'s task should take. */
function knownTime(state: LiveState, view: JobView): boolean {
  const facts = view.facts;
  if (!facts || !state.learned) return false;
  return (
    state.learned.distribution({ model: facts.model, resolution: facts.resolution }, facts.seconds) !==
    undefined
  );
}

/**
 * A task of this run ended `ms` after its claim, beyond the time the service took to make it. Only
 * tasks planned from learned run times: the first ones, polled while nothing was, are noticed late
 * by a good part of their run time, and the tasks the ETA is for will not be.
 */
function noteOverhead(state: LiveState, ms: number): void {
  state.overheads.unshift(ms);
  state.overheads.length = Math.min(state.overheads.length, OVERHEADS_KEPT);
}

/** Keeps `view`'s end of this session (if it ended in it) among the ends no job shows. */
function replace(state: LiveState, key: string, view: JobView): void {
  if (view.place === "done" || view.place === "failed" || view.place === "uncertain") {
    state.replaced.push({ key, version: view.facts?.version, place: view.place });
  }
}

/** The end of this session of `key` at `version` that no job showed, taken back (undefined: none). */
function takeBack(state: LiveState, key: string, version: string): EndReplaced["place"] | undefined {
  const i = state.replaced.findLastIndex((end) => end.key === key && end.version === version);
  return i < 0 ? undefined : state.replaced.splice(i, 1)[0]!.place;
}

function moveTo(view: JobView, place: JobPlace, now: number): void {
  if (view.place === place) return;
  view.place = place;
  view.since = now;
}

/** The job `key` of the manifests, or the task no manifest lists (kept from now on). */
function viewOf(state: LiveState, key: string, now: number): JobView {
  let view = state.jobs.get(key) ?? state.others.get(key);
  if (!view) {
    view = { place: "waiting", since: now };
    state.others.set(key, view);
  }
  return view;
}

/**
 * A manifest's jobs, as read now. A job of the same version keeps its place (done in this session
 * stays this session's); a new or changed one starts over (done before, or waiting), its earlier
 * version's end in this session kept as this session's work (and shown again by its job if it is
 * edited back: counted once). A job no longer listed whose task is under way is still followed,
 * among the others.
 */
function setManifest(state: LiveState, name: string, jobs: readonly JobFacts[], now: number): void {
  const listed = new Set(jobs.map((job) => job.key));
  for (const key of state.manifests.get(name) ?? []) {
    if (listed.has(key)) continue;
    const view = state.jobs.get(key);
    state.jobs.delete(key);
    if (view && underWay(view)) state.others.set(key, view);
    else if (view) replace(state, key, view);
  }
  for (const facts of jobs) {
    const known = state.jobs.get(facts.key) ?? state.others.get(facts.key);
    state.others.delete(facts.key);
    if (known && known.facts?.version === facts.version) {
      known.facts = facts;
      // Made by another runner of a fleet meanwhile.
      if (facts.done && known.place === "waiting") moveTo(known, "doneBefore", now);
      state.jobs.set(facts.key, known);
      continue;
    }
    if (known && underWay(known))
      state.others.set(facts.key, known); // its earlier version's task
    else if (known && state.jobs.get(facts.key) === known) replace(state, facts.key, known);
    const place = takeBack(state, facts.key, facts.version) ?? (facts.done ? "doneBefore" : "waiting");
    state.jobs.set(facts.key, { place, since: now, facts });
  }
  if (jobs.length === 0) state.manifests.delete(name);
  else state.manifests.set(name, [...listed]);
}

function underWay(view: JobView): boolean {
  return HOLDING.has(view.place) || view.place === "downloading";
}
