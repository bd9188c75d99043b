// What `reel plan` needs to know from the state file, read-only: which jobs are done, in flight or
// failed, which contents are uploaded and which speech exists, for one service. The plan itself is
// pure and synchronous (manifest/plan.ts); the store is asynchronous, so what the plan may ask of it
// is read here first, for the jobs of `manifests`.
import type { NormalizedManifest, PlanStateView } from "../manifest/index.js";
import { isSpeechDoubt, noSpeechInDoubt } from "../engine/speech-doubt.js";
import { refsOf } from "../engine/submit.js";
import { videoFile } from "../output/layout.js";
import { filesHere, keptName } from "../output/versions.js";
import { outFolderOf } from "../output/out-folder.js";
import { earlierVersionOf, errorOfRow, jobStatusOf } from "../drivers/job-versions.js";
import { describeRetake } from "../review/retake.js";
import {
  type JobRow,
  type JobStore,
  type RetakeRow,
  type SpeechRow,
  versionKey,
} from "../state/job-store.js";

/** `retakes`: the retake of each job of `manifests` that is one, by versionKey (see review/retake.ts). */
export async function loadPlanStateView(
  store: JobStore,
  outDir: string,
  manifests: readonly NormalizedManifest[],
  retakes: ReadonlyMap<string, RetakeRow> = new Map(),
): Promise<PlanStateView> {
  const here = { store, outDir, out: outFolderOf(outDir) };
  const made = await store.madeSpecs();
  const rows = new Map<string, JobRow | undefined>();
  const replaced = new Map<string, string | undefined>();
  const assets = new Map<string, string | undefined>();
  const speech = new Map<string, SpeechRow | undefined>();
  const speechKey = (voiceId: string, text: string): string => `${voiceId}\n${text}`;
  for (const manifest of manifests) {
    for (const job of manifest.jobs) {
      const version = versionKey(job.key, job.specHash);
      rows.set(version, await store.findJob(job.key, job.specHash));
      const older = (await filesHere(here, job.key, videoFile(job.manifest, job.id))).find(
        (row) => row.spec_hash !== job.specHash,
      );
      replaced.set(version, older && (await keptName(here, older)));
      for (const ref of refsOf(job)) {
        if (ref.kind === "file") {
          if (!assets.has(ref.sha256)) assets.set(ref.sha256, await store.findAsset(ref.sha256));
        } else if (ref.kind === "speech") {
          const key = speechKey(ref.voiceId, ref.text);
          if (!speech.has(key)) speech.set(key, await store.findSpeech(ref.voiceId, ref.text));
        }
      }
    }
  }
  // Uncertain for their speech alone, which is in doubt no longer: a run sends them as new ones.
  const speechSettled = new Set<string>();
  for (const manifest of manifests) {
    for (const job of manifest.jobs) {
      const version = versionKey(job.key, job.specHash);
      const row = rows.get(version);
      if (row && isSpeechDoubt(row) && (await noSpeechInDoubt(job, (v, t) => speech.get(speechKey(v, t)))))
        speechSettled.add(version);
    }
  }
  // Every version of these jobs, for --explain: the last one before this, and this one's error.
  const wanted = new Set(manifests.flatMap((m) => m.jobs.map((job) => job.key)));
  const versions = new Map<string, JobRow[]>();
  for (const row of await store.listJobs()) {
    if (!wanted.has(row.job_key)) continue;
    const list = versions.get(row.job_key) ?? [];
    list.push(row);
    versions.set(row.job_key, list);
  }
  return {
    earlierVersion: (key, specHash) => earlierVersionOf(versions.get(key) ?? [], specHash),
    // A job not sent for its speech's doubt, now settled, is one that failed before anything was sent:
    // a run sends it as a new one.
    errorOf(key, specHash) {
      const version = versionKey(key, specHash);
      const row = rows.get(version);
      return speechSettled.has(version) ? row && (row.error ?? row.state) : errorOfRow(row);
    },
    madeAs: (specHash) => made.get(specHash),
    retakeOf: (key, specHash) => {
      const retake = retakes.get(versionKey(key, specHash));
      return retake && describeRetake(retake);
    },
    replacedAs: (key, specHash) => replaced.get(versionKey(key, specHash)),
    jobStatus(key, specHash) {
      const version = versionKey(key, specHash);
      return speechSettled.has(version) ? "new" : jobStatusOf(rows.get(version));
    },
    assetUploaded: (sha256) => assets.get(sha256) !== undefined,
    speechMade: (voiceId, text) => speech.get(speechKey(voiceId, text))?.state === "done",
  };
}
