// What the drivers (`run`, `watch`) say about a manifest's jobs before the engine takes them.
import type { JobFacts, ProgressSink } from "../engine/progress.js";
import type { Job } from "../manifest/index.js";
import { type JobStore, versionKey } from "../state/store.js";

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
 * A job's identity is manifest/id (PRODUCT.md): a renamed manifest makes every video new, to be
 * paid for again. Allowed (without a seed, the same request makes another take), but never
 * silently. Called before the jobs are recorded.
 */
export async function noteRepeatedJobs(
  progress: ProgressSink,
  store: JobStore,
  jobs: readonly Job[],
): Promise<void> {
  // Jobs already recorded are not new: a watcher re-reading a saved manifest reads no other rows.
  const fresh: Job[] = [];
  for (const job of jobs) if (!(await store.hasJob(job.key, job.specHash))) fresh.push(job);
  if (fresh.length === 0) return;
  const made = await store.madeSpecs();
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
