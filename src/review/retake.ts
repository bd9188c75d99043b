// Retakes (reel retake): one more take of a video, with a new seed, paid once.
//
// A retake of take `intro~k` (or of `intro`, a video without takes: its own first take) is take
// `intro~n`, n the highest take number the video ever had plus one, seeded by the rule of a
// manifest's takes (manifest/takes.ts seedOfTake): so raising `takes` in the manifest to n later
// lists the very same job, not a new one. Its seed differs from every earlier take's (the next
// number is taken if one would not). The store queues it (ReviewRecords.queueRetake) as an unsent job;
// a run or watch of its manifest takes it among the manifest's jobs (withRetakes) as long as its
// video's request is the one it was made from, and claims it as any job: paid once.
import { computeSpecHash } from "../manifest/plan/spec-hash.js";
import { isTakeOf, seedOfTake, takeId, takeOf, takeSeed } from "../manifest/expand/takes.js";
import type { Job, JobSpec, NormalizedManifest } from "../manifest/types.js";
import { readStoredSpec } from "../stored-spec.js";
import {
  type JobRow,
  type JobStore,
  type NewJob,
  type RetakeRow,
  versionKey,
  type VideoTakes,
} from "../state/job-store.js";

/**
 * The seed a video's takes count from, as its take `id` with `seed` shows it: a take of a video
 * without a seed has takeSeed's; one of a video with seed S has S + k - 1. Undefined: none.
 */
export function videoSeedOf(manifest: string, id: string, seed: number | undefined): number | undefined {
  if (seed === undefined) return undefined;
  const { video, n } = takeOf(id);
  if (id !== video && seed === takeSeed(manifest, id)) return undefined;
  return seed - (n - 1);
}

/** `spec` with `seed`, in the order normalize writes a spec's fields (the spec hash ignores it). */
function withSeed(spec: JobSpec, seed: number): JobSpec {
  const { model, resolution, aspectRatio, source, chunks } = spec;
  return {
    model,
    ...(resolution !== undefined ? { resolution } : {}),
    ...(aspectRatio !== undefined ? { aspectRatio } : {}),
    seed,
    ...(source !== undefined ? { source } : {}),
    chunks,
  };
}

/**
 * The job of the take that retakes `from` (its current version), given every take of its video so
 * far: what queueRetake's `plan` returns.
 */
export function planRetake(from: JobRow, video: VideoTakes): NewJob {
  const { video: id } = takeOf(from.video_id);
  const spec = JSON.parse(from.spec_json) as JobSpec;
  const videoSeed = videoSeedOf(from.manifest, from.video_id, spec.seed);
  const numbers = [...video.jobs.map((row) => row.video_id), ...video.retakes.map((row) => row.videoId)].map(
    (taken) => takeOf(taken).n,
  );
  const seeds = new Set(
    video.jobs.map((row) => readStoredSpec(row.spec_json).seed).filter((s) => s !== undefined),
  );
  let n = Math.max(takeOf(from.video_id).n, ...numbers) + 1;
  while (seeds.has(seedOfTake(from.manifest, id, n, videoSeed))) n++;
  const made = withSeed(spec, seedOfTake(from.manifest, id, n, videoSeed));
  const videoId = takeId(id, n);
  return {
    key: `${from.manifest}/${videoId}`,
    manifest: from.manifest,
    videoId,
    specHash: computeSpecHash(made),
    specJson: JSON.stringify(made),
    seconds: from.seconds,
    model: from.model,
  };
}

/** What plan --explain and watch say of a retake: "retake of intro~2, rejected by ana: 'too wide'". */
export function describeRetake(retake: RetakeRow): string {
  const from = retake.fromKey.slice(retake.manifest.length + 1);
  return `retake of ${from}, rejected by ${retake.reviewer}${retake.note === null ? "" : `: '${retake.note}'`}`;
}

/** A manifest's jobs with its retakes among them, and the retakes it no longer makes. */
export interface ManifestsWithRetakes {
  readonly manifests: NormalizedManifest[];
  /** The retake of each job added, by versionKey. */
  readonly retakes: ReadonlyMap<string, RetakeRow>;
  /**
   * Retakes not sent yet whose video's request changed since (or which the manifest no longer
   * lists): not made; a run forgets their unsent jobs as it forgets an edited video's.
   */
  readonly stale: readonly RetakeRow[];
}

/**
 * The job of `retake` as `manifest` makes its video now (from any of its takes there): undefined
 * when the video is gone from it or its request changed since the retake was queued.
 */
function retakeJob(manifest: NormalizedManifest, retake: RetakeRow): Job | undefined {
  const { video, n } = takeOf(retake.videoId);
  const listed = manifest.jobs.find((job) => isTakeOf(job.id, video));
  if (!listed) return undefined;
  const spec = withSeed(
    listed.spec,
    seedOfTake(manifest.name, video, n, videoSeedOf(manifest.name, listed.id, listed.spec.seed)),
  );
  const specHash = computeSpecHash(spec);
  if (specHash !== retake.specHash) return undefined;
  return { ...listed, id: retake.videoId, key: retake.key, spec, specHash };
}

/**
 * `manifests`, each with the retakes of its videos among its jobs (those queued, and those sent, so
 * that a run follows, downloads and reports them as its own), read from `store` for its service. A
 * take the manifest lists itself (its `takes` raised) is its own job already.
 */
export async function withRetakes(
  store: Pick<JobStore, "listRetakes">,
  manifests: readonly NormalizedManifest[],
): Promise<ManifestsWithRetakes> {
  const all = await store.listRetakes(manifests.map((m) => m.name));
  const retakes = new Map<string, RetakeRow>();
  const stale: RetakeRow[] = [];
  const out = manifests.map((manifest) => {
    const own = all.filter(
      (r) => r.manifest === manifest.name && (r.state === "queued" || r.state === "sent"),
    );
    if (own.length === 0) return manifest;
    const listed = new Set(manifest.jobs.map((job) => job.key));
    const added: Job[] = [];
    for (const retake of own) {
      const job = retakeJob(manifest, retake);
      if (job === undefined) {
        if (retake.state === "queued") stale.push(retake);
        continue;
      }
      retakes.set(versionKey(job.key, job.specHash), retake);
      if (!listed.has(job.key)) added.push(job);
    }
    return added.length === 0 ? manifest : { ...manifest, jobs: [...manifest.jobs, ...added] };
  });
  return { manifests: out, retakes, stale };
}

/** Lines a run or watch says of retakes it will not make: their video changed since they were queued. */
export function staleRetakeLines(stale: readonly RetakeRow[]): string[] {
  return stale.map(
    (retake) =>
      `${retake.key} (a retake of ${retake.fromKey}) is not made: its video's request changed since it was queued, and the new version's takes are undecided; retake one of those instead`,
  );
}
