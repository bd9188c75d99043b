// What the live display knows, folded from the engine's events: the jobs in flight and where each
// is, the files being hashed or uploaded, the counts of this run and of earlier ones, the run times
// the ETA is learned from, and why reel waits. A plain object changed by applyEvent, so that the
// frame (frame.ts) is a pure function of it and a clock, testable without a terminal.
import type { ProgressEvent } from "../engine/progress.js";

/** Where a job in flight is. */
export type JobPlace =
  "preparing" | "queued" | "submitting" | "PreProcessing" | "Pending" | "Running" | "downloading";

export interface JobView {
  place: JobPlace;
  /** When it came to this place. */
  since: number;
  /** When it took a generation slot (its run time counts from there). */
  slotAt?: number;
}

/** How a job ended: in this run, or (`before`) in an earlier one, left as it was (not retried). */
export type FinalKind = "done" | "failed" | "uncertain" | "before";

export interface ManifestCount {
  /** Its jobs, and those done before (by an earlier run or watch session), when last read. */
  total: number;
  before: number;
  loadedAt: number;
}

export interface LiveState {
  readonly concurrency: number;
  startedAt: number;
  /** `run`: the manifests of the run as one (key ""); `watch`: each by name. */
  readonly manifests: Map<string, ManifestCount>;
  /** Jobs that ended in this run (this watch session), the last way each ended. */
  readonly finals: Map<string, { kind: FinalKind; at: number }>;
  /**
   * watch: versions that ended in this session and were then edited (a new version to make): still
   * this session's work, no longer their video's.
   */
  readonly replaced: { done: number; failed: number; uncertain: number };
  readonly jobs: Map<string, JobView>;
  readonly hashing: Set<string>;
  readonly uploads: Map<string, { size: number; sent: number }>;
  readonly speaking: Set<string>;
  /** The last wait with a duration (Retry-After, backoff, the client's retries). */
  wait: { detail: string; until: number } | undefined;
  paused: { detail: string; until: number | undefined } | undefined;
  /** Run times (slot to end, download included) of this run's jobs done: their sum and count. */
  runTime: { sumMs: number; count: number };
}

export function makeLiveState(concurrency: number, now: number): LiveState {
  return {
    concurrency,
    startedAt: now,
    manifests: new Map(),
    finals: new Map(),
    replaced: { done: 0, failed: 0, uncertain: 0 },
    jobs: new Map(),
    hashing: new Set(),
    uploads: new Map(),
    speaking: new Set(),
    wait: undefined,
    paused: undefined,
    runTime: { sumMs: 0, count: 0 },
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
};

const SERVICE_PLACES: Record<string, JobPlace> = {
  PreProcessing: "PreProcessing",
  Pending: "Pending",
  Running: "Running",
};

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
    case "manifest":
      if (key !== undefined) {
        for (const job of e.toMake ?? []) {
          const final = state.finals.get(job);
          if (final === undefined) continue;
          if (final.kind !== "before") state.replaced[final.kind]++;
          state.finals.delete(job);
        }
        // Its videos done in this session are counted as this session's, not again as before.
        let doneHere = 0;
        for (const [job, final] of state.finals) {
          if (final.kind === "done" && manifestOf(state, job) === key) doneHere++;
        }
        state.manifests.set(key, {
          total: e.total ?? 0,
          before: Math.max(0, (e.done ?? 0) - doneHere),
          loadedAt: now,
        });
      }
      return;
    case "following":
      if (key !== undefined) {
        const place = SERVICE_PLACES[e.detail ?? ""] ?? "PreProcessing";
        state.jobs.set(key, { place, since: now, slotAt: state.jobs.get(key)?.slotAt ?? now });
      }
      return;
    case "done":
    case "failed":
    case "uncertain": {
      if (key === undefined) return;
      const job = state.jobs.get(key);
      // Learned from videos made: a failure (often at once) says nothing of how long the others take.
      if (job?.slotAt !== undefined && e.stage === "done") {
        state.runTime.sumMs += now - job.slotAt;
        state.runTime.count++;
      }
      state.jobs.delete(key);
      state.finals.set(key, { kind: e.stage, at: now });
      return;
    }
    case "ended-before":
      // A watch reading a manifest again meets the failures of this session: they stay its own.
      if (key !== undefined && !state.finals.has(key)) state.finals.set(key, { kind: "before", at: now });
      return;
    case "dropped":
      if (key !== undefined) state.jobs.delete(key);
      return;
    default: {
      const place = PLACE_OF[e.stage];
      if (place === undefined || key === undefined) return;
      const job = state.jobs.get(key);
      if (job?.place === place) return;
      const slotAt = job?.slotAt ?? (place === "submitting" || place === "PreProcessing" ? now : undefined);
      state.jobs.set(key, { place, since: now, ...(slotAt === undefined ? {} : { slotAt }) });
    }
  }
}

/** The manifest a job key (manifest/id) belongs to, as the state counts it. */
function manifestOf(state: LiveState, key: string): string {
  if (state.manifests.has("")) return "";
  const slash = key.lastIndexOf("/");
  return slash < 0 ? "" : key.slice(0, slash);
}

export interface Totals {
  total: number;
  /** Ended: done before, and ended in this run (any way). */
  finished: number;
  before: number;
  /** Ended in an earlier run another way than done (a failure not retried). */
  endedBefore: number;
  /** This run's. */
  done: number;
  failed: number;
  uncertain: number;
}

export function totalsOf(state: LiveState): Totals {
  const totals: Totals = {
    total: 0,
    finished: 0,
    before: 0,
    endedBefore: 0,
    done: 0,
    failed: 0,
    uncertain: 0,
  };
  const ended = new Map<string, number>(); // manifest -> its jobs ended in this run or session
  totals.done += state.replaced.done;
  totals.failed += state.replaced.failed;
  totals.uncertain += state.replaced.uncertain;
  for (const [key, final] of state.finals) {
    if (final.kind === "before") totals.endedBefore++;
    else totals[final.kind]++;
    const manifest = manifestOf(state, key);
    ended.set(manifest, (ended.get(manifest) ?? 0) + 1);
  }
  for (const [name, count] of state.manifests) {
    totals.total += count.total;
    totals.before += count.before;
    // At most its jobs: a video done before and fetched again (deleted meanwhile) is counted once.
    totals.finished += Math.min(count.total, count.before + (ended.get(name) ?? 0));
  }
  return totals;
}

/**
 * How long the jobs not ended yet should take: each in flight the mean run time less its age (at
 * least a tenth of it), each not started the mean; `concurrency` at a time. Undefined until a job of this
 * run ended (nothing to learn from yet).
 */
export function etaMs(state: LiveState, now: number): number | undefined {
  const { sumMs, count } = state.runTime;
  if (count === 0) return undefined;
  const mean = sumMs / count;
  const { total, finished } = totalsOf(state);
  const remaining = total - finished;
  if (remaining <= 0) return 0;
  let work = 0;
  let started = 0;
  for (const job of state.jobs.values()) {
    if (job.slotAt === undefined) continue;
    started++;
    // One past the mean still has some way to go: a tenth of it, rather than none (an ETA of 0 s
    // with videos unfinished reads as broken).
    work += Math.max(mean / 10, mean - (now - job.slotAt));
  }
  work += Math.max(0, remaining - started) * mean;
  return work / Math.max(1, Math.min(state.concurrency, remaining));
}
