// What `reel plan` needs to know from the state file, read-only: which jobs are done, in flight or
// failed, which contents are uploaded and which speech exists, for one service. The plan itself is
// pure and synchronous (manifest/plan.ts); the store is asynchronous, so what the plan may ask of it
// is read here first, for the jobs of `manifests`.
import type { JobStatus, NormalizedManifest, PlanStateView } from "../manifest/index.js";
import { resolve } from "node:path";
import { isSpeechDoubt, noSpeechInDoubt } from "../engine/speech-doubt.js";
import { refsOf } from "../engine/submit.js";
import { videoFile } from "../output/layout.js";
import { keptName } from "../output/versions.js";
import { type JobRow, type JobStore, type SpeechRow, versionKey } from "../state/store.js";

export async function loadPlanStateView(
  store: JobStore,
  outDir: string,
  manifests: readonly NormalizedManifest[],
): Promise<PlanStateView> {
  const outKey = resolve(outDir);
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
      const older = (await store.listJobsWithFile(job.key, videoFile(job.manifest, job.id), outKey)).find(
        (row) => row.spec_hash !== job.specHash,
      );
      replaced.set(version, older && (await keptName({ store, outDir, outKey }, older)));
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
    earlierVersion(key, specHash) {
      const others = (versions.get(key) ?? []).filter((row) => row.spec_hash !== specHash);
      // The last one sent, else the last one recorded.
      const sent = others.filter((row) => row.attempts > 0);
      const last = (sent.length > 0 ? sent : others).reduce<JobRow | undefined>(
        (latest, row) => (latest === undefined || row.updated_at > latest.updated_at ? row : latest),
        undefined,
      );
      return last && { specJson: last.spec_json, sent: last.attempts > 0 };
    },
    errorOf(key, specHash) {
      const row = rows.get(versionKey(key, specHash));
      // A job not sent for its speech's doubt, now settled, is one that failed before anything was sent.
      const stopped =
        row?.state === "Fail" || row?.state === "Canceled" || speechSettled.has(versionKey(key, specHash));
      return row && stopped ? (row.error ?? row.state) : undefined;
    },
    madeAs: (specHash) => made.get(specHash),
    replacedAs: (key, specHash) => replaced.get(versionKey(key, specHash)),
    jobStatus(key: string, specHash: string): JobStatus {
      const row = rows.get(versionKey(key, specHash));
      switch (row?.state) {
        case undefined:
        case "pending":
          return "new";
        case "Success":
          return "done";
        case "submitting":
        case "submitted":
          return "in-flight";
        case "uncertain":
          return speechSettled.has(versionKey(key, specHash)) ? "new" : "uncertain";
        case "Fail":
        case "Canceled":
          // Nothing was sent for a local failure: the next run simply tries again.
          return row.fail_kind === "local" ? "new" : "failed";
      }
    },
    assetUploaded: (sha256) => assets.get(sha256) !== undefined,
    speechMade: (voiceId, text) => speech.get(speechKey(voiceId, text))?.state === "done",
  };
}
