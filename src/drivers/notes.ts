// What the drivers (`run`, `watch`) say about a manifest's jobs before the engine takes them.
import type { JobFacts, ProgressSink } from "../engine/progress.js";
import {
  explainNew,
  type Job,
  type NormalizedManifest,
  type Reason,
  summarizeReasons,
} from "../manifest/index.js";
import { describeRetake } from "../review/retake.js";
import { type JobRow, type JobStore, type RetakeRow, versionKey } from "../state/job-store.js";
import { earlierVersionOf, errorOfRow, jobStatusOf } from "./job-versions.js";

/**
 * The progress display starts with how many jobs are already done, counted from the state alone:
 * the engine checks each video on disk once (and fetches a deleted one again). One query, not a row
 * per job: setManifestJobs writes the rows just after.
 */
export async function startProgress(
  progress: ProgressSink,
  store: JobStore,
  jobs: readonly Job[],
): Promise<void> {
  const done = await store.downloadedVersions();
  const facts = jobFacts(jobs, done);
  progress.event({ stage: "manifest", key: "", jobs: facts });
  progress.start(jobs.length, facts.filter((job) => job.done).length);
  await noteRepeatedJobs(progress, store, jobs);
}

/** What the display knows of `jobs` (`done`: store.downloadedVersions()). */
export function jobFacts(jobs: readonly Job[], done: ReadonlySet<string>): JobFacts[] {
  return jobs.map((job) => ({
    key: job.key,
    version: job.specHash,
    seconds: job.seconds,
    model: job.model,
    resolution: job.spec.resolution,
    done: done.has(versionKey(job.key, job.specHash)),
  }));
}

/**
 * A job's identity is manifest/id (the README): a renamed manifest makes every video new, to be
 * paid for again. Allowed (without a seed, the same request makes another take), but never
 * silently. Called before the jobs are recorded.
 */
export async function noteRepeatedJobs(
  progress: ProgressSink,
  store: JobStore,
  jobs: readonly Job[],
): Promise<void> {
  // Jobs already recorded are not new: a watcher re-reading a saved manifest reads no other rows.
  const fresh = await store.notRecorded(jobs);
  if (fresh.length === 0) return;
  const made = await store.madeSpecs([...new Set(fresh.map((job) => job.specHash))]);
  const repeats = fresh.filter((job) => {
    const sameAs = made.get(job.specHash);
    return sameAs !== undefined && sameAs !== job.key;
  });
  if (repeats.length > 0) {
    const first = repeats[0]!;
    progress.event({
      stage: "note",
      detail: `${repeats.length} new ${repeats.length === 1 ? "job repeats a video" : "jobs repeat videos"} already made under another name (${first.key} = ${made.get(first.specHash)}): ${repeats.length === 1 ? "it is" : "they are"} generated and paid for again. A renamed manifest or id? Ctrl-C, give the old name back, and rerun ('reel plan' lists them).`,
    });
  }
}

/** A manifest as a watcher reads it against the state: what is made, and what it will have generated. */
export interface ManifestReading {
  /** What the display knows of its jobs: each version asked for now, and whether its video is made. */
  readonly jobs: readonly JobFacts[];
  /** Why, in `plan --explain`'s words: `7 changed: chunks[0].text; 2 new`; "" when none. */
  readonly why: string;
}

/**
 * Reads the state of a manifest's jobs (one query: every version of its videos) before the engine
 * takes them. Failed and uncertain jobs are left out: the engine sends them again only on request
 * (--retry-failed, once per session; --resubmit-uncertain).
 */
export async function readManifestJobs(
  store: JobStore,
  manifest: NormalizedManifest,
  cwd: string,
  retakes: ReadonlyMap<string, RetakeRow> = new Map(),
): Promise<ManifestReading> {
  const versions = new Map<string, JobRow[]>();
  for (const row of await store.listManifestJobs(manifest.name)) {
    const list = versions.get(row.job_key) ?? [];
    list.push(row);
    versions.set(row.job_key, list);
  }
  const rowOf = (key: string, specHash: string): JobRow | undefined =>
    versions.get(key)?.find((row) => row.spec_hash === specHash);
  const view = {
    earlierVersion: (key: string, specHash: string) => earlierVersionOf(versions.get(key) ?? [], specHash),
    errorOf: (key: string, specHash: string) => errorOfRow(rowOf(key, specHash)),
    retakeOf: (key: string, specHash: string) => {
      const retake = retakes.get(versionKey(key, specHash));
      return retake && describeRetake(retake);
    },
  };
  const done = new Set<string>();
  const reasons: Reason[] = [];
  for (const job of manifest.jobs) {
    const row = rowOf(job.key, job.specHash);
    if (row?.state === "Success" && row.file !== null) done.add(versionKey(job.key, job.specHash));
    if (jobStatusOf(row) === "new") reasons.push(explainNew(job, view, cwd));
  }
  return { jobs: jobFacts(manifest.jobs, done), why: summarizeReasons(reasons) };
}
