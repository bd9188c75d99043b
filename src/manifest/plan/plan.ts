// What a run would do, computed from the loaded manifests and (optionally) the state: which jobs
// are new, done, in flight, failed or uncertain; which files must be uploaded and which the
// service already has; which speech must be generated; how many seconds of video per model.
// Pure: no call to the service, no I/O.
import type { Id, Model } from "../../service-contract/api-types.js";
import type { MediaFormat } from "../../service-contract/media-format.js";
import type { AssetRef, Job, NormalizedManifest, SpeechRef } from "../types.js";

export type JobStatus = "done" | "in-flight" | "failed" | "uncertain" | "new";

/** The last version of a job the state knows, other than the one planned. */
export interface EarlierVersion {
  /** Its request, as recorded (JSON of its JobSpec). */
  readonly specJson: string;
  /** Whether it was ever sent. */
  readonly sent: boolean;
}

/** What the explanation needs of the state. */
export interface ExplainView {
  /** The latest other version of job `key` (another spec), if any. */
  earlierVersion(key: string, specHash: string): EarlierVersion | undefined;
  /** The error of this very version, if it ended in one. */
  errorOf(key: string, specHash: string): string | undefined;
  /** This version is a retake (reel retake): what plan --explain says of it ("retake of intro~2, ..."). */
  retakeOf?(key: string, specHash: string): string | undefined;
}

/** What the plan needs to know of the state file. The state part implements it. */
export interface PlanStateView extends Partial<ExplainView> {
  jobStatus(key: string, specHash: string): JobStatus;
  /** The key of a job already generated with exactly this request, if any. */
  madeAs(specHash: string): string | undefined;
  /**
   * The name the video of an earlier version of this job will be kept under when this version
   * takes its place (`<id>.mp4`), if an earlier version's video is there.
   */
  replacedAs?(key: string, specHash: string): string | undefined;
  assetUploaded(sha256: string): boolean;
  speechMade(voiceId: string, text: string): boolean;
}

export interface PlanUpload {
  sha256: string;
  size: number;
  format: MediaFormat;
  /** Every path with this content (the same content is uploaded once). */
  paths: string[];
}

export interface PlanSpeech {
  voiceId: Id;
  text: string;
}

export interface PlanModelLine {
  model: Model;
  videos: number;
  seconds: number;
  /** Of those, the jobs still to submit. */
  newVideos: number;
  newSeconds: number;
}

export interface Plan {
  manifests: number;
  videos: number;
  seconds: number;
  /** Job keys (`manifest/id`) by status, in manifest order. */
  jobs: { new: string[]; done: string[]; inFlight: string[]; failed: string[]; uncertain: string[] };
  /**
   * New jobs whose request is exactly that of a video already generated under another key (a
   * renamed manifest or id): a run pays for them again. `sameAs`: the key it was made under.
   */
  repeats: { key: string; sameAs: string }[];
  /** New jobs that replace an earlier version's video: it is kept, renamed to `keptAs` (relative to OUT). */
  replaces: { key: string; keptAs: string }[];
  /**
   * New jobs already sent to another service address (the same key and spec): `run` refuses them
   * unless --new-service, as the address may be another name of the same service. Filled by the
   * caller, which knows the services.
   */
  sentElsewhere: { key: string; baseUrl: string }[];
  /**
   * Local files the new jobs use, once per content: to upload, or already uploaded. Only new jobs
   * count: done and in-flight jobs need nothing, failed and uncertain ones are not resubmitted
   * unless asked (`run --retry-failed`, `--resubmit-uncertain`).
   */
  uploads: { new: PlanUpload[]; cached: PlanUpload[] };
  /** https sources of new jobs: downloaded, then uploaded (once per URL). */
  downloads: string[];
  speech: { new: PlanSpeech[]; cached: PlanSpeech[] };
  models: PlanModelLine[];
}

const STATUS_FIELD: Record<JobStatus, keyof Plan["jobs"]> = {
  new: "new",
  done: "done",
  "in-flight": "inFlight",
  failed: "failed",
  uncertain: "uncertain",
};

function refsOf(job: Job): (AssetRef | SpeechRef)[] {
  const refs: (AssetRef | SpeechRef)[] = [];
  if (job.spec.source) refs.push(job.spec.source);
  for (const chunk of job.spec.chunks) if (chunk.audio) refs.push(chunk.audio);
  return refs;
}

export function makePlan(manifests: readonly NormalizedManifest[], view?: PlanStateView): Plan {
  const plan: Plan = {
    manifests: manifests.length,
    videos: 0,
    seconds: 0,
    jobs: { new: [], done: [], inFlight: [], failed: [], uncertain: [] },
    repeats: [],
    replaces: [],
    sentElsewhere: [],
    uploads: { new: [], cached: [] },
    downloads: [],
    speech: { new: [], cached: [] },
    models: [],
  };
  const uploads = new Map<string, PlanUpload>();
  const downloads = new Set<string>();
  const speech = new Map<string, PlanSpeech>();
  const models = new Map<Model, PlanModelLine>();

  for (const manifest of manifests) {
    for (const job of manifest.jobs) {
      const status = view ? view.jobStatus(job.key, job.specHash) : "new";
      plan.jobs[STATUS_FIELD[status]].push(job.key);
      plan.videos++;
      plan.seconds += job.seconds;
      let line = models.get(job.model);
      if (!line) {
        line = { model: job.model, videos: 0, seconds: 0, newVideos: 0, newSeconds: 0 };
        models.set(job.model, line);
      }
      line.videos++;
      line.seconds += job.seconds;
      if (status !== "new") continue;
      const sameAs = view?.madeAs(job.specHash);
      if (sameAs !== undefined && sameAs !== job.key) plan.repeats.push({ key: job.key, sameAs });
      const keptAs = view?.replacedAs?.(job.key, job.specHash);
      if (keptAs !== undefined) plan.replaces.push({ key: job.key, keptAs });
      line.newVideos++;
      line.newSeconds += job.seconds;
      for (const ref of refsOf(job)) {
        if (ref.kind === "file") {
          const known = uploads.get(ref.sha256);
          if (!known)
            uploads.set(ref.sha256, {
              sha256: ref.sha256,
              size: ref.size,
              format: ref.format,
              paths: [ref.path],
            });
          else if (!known.paths.includes(ref.path)) known.paths.push(ref.path);
        } else if (ref.kind === "url") {
          downloads.add(ref.url);
        } else if (ref.kind === "speech") {
          // Voice and text joined by a character that cannot be in an id.
          speech.set(`${ref.voiceId}\n${ref.text}`, { voiceId: ref.voiceId, text: ref.text });
        }
      }
    }
  }

  for (const upload of uploads.values()) {
    (view?.assetUploaded(upload.sha256) ? plan.uploads.cached : plan.uploads.new).push(upload);
  }
  for (const item of speech.values()) {
    (view?.speechMade(item.voiceId, item.text) ? plan.speech.cached : plan.speech.new).push(item);
  }
  plan.downloads = [...downloads];
  plan.models = [...models.values()].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  return plan;
}
