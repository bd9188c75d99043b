// What the engine tells while it works: one event per step of a job, of a file it hashes, uploads or
// turns into speech, and per wait, with its reason. The engine only emits them; what the user sees
// of them (a live display on a terminal, one line per event elsewhere, JSON) is src/display/'s.
import type { FleetView } from "../state/job-store.js";
import type { LearnedTimes } from "./run-times.js";

/**
 * Stages printed as lines off a terminal and in `watch --json` (scripts and tests read them: their
 * names and texts do not change).
 */
export type LineStage =
  | "uploaded"
  | "speech"
  | "submitted"
  | "running"
  | "done"
  | "failed"
  | "uncertain"
  | "note"
  /** watch: every job of a manifest is final; `key` the manifest, `detail` its counts. */
  | "finished";

/**
 * Stages only the live display shows (where a job or a file is now, and why reel waits): too many
 * for a log, read by no script.
 */
export type LiveStage =
  /** A file is being hashed (`asset`: its path); `hashed` when its hash is known. */
  | "hashing"
  | "hashed"
  /** A file is being uploaded: `asset` its hash, `detail` its name, `bytes` its size. */
  | "uploading"
  /** Bytes of the upload `asset` read and sent so far (`bytes`). */
  | "upload-bytes"
  /** The upload `asset` ended without an asset (`uploaded` says one that succeeded). */
  | "upload-ended"
  /** Speech is being made (`asset`: voice and text); `speech` says one made. */
  | "speaking"
  | "speech-ended"
  /** The job's assets are being resolved (uploads, speech). */
  | "preparing"
  /** The job waits for a generation slot (the concurrency bound). */
  | "queued"
  /** The job holds a slot, its submission about to leave. */
  | "submitting"
  /**
   * A task already on the service (an earlier run's) is followed again: `detail` its status, `ms`
   * the time since its submission.
   */
  | "following"
  /** The job's task waits in the service's queue. */
  | "pending"
  /**
   * The job's task was seen final (`detail`: Success, Fail, Canceled), its slot about to be let go;
   * `ms`: the time from its submission to its end, as learned (run-times.ts), when it was.
   */
  | "ended"
  /**
   * The job let its generation slot go (its task ended, or nothing was sent, or it stopped): said
   * before another job may take it. Where the job goes next, its next event says.
   */
  | "released"
  /** The job's video is being downloaded. */
  | "downloading"
  /** The job ended in an earlier run (`detail`: Fail, Canceled, uncertain) and is left as it is. */
  | "ended-before"
  /** The job is no longer worked on by this run, though not final (stopped, withdrawn, left). */
  | "dropped"
  /** reel waits `ms` before trying again: `detail` says why (Retry-After, backoff, retries). */
  | "waiting"
  /** The service is paused (watch: key or credits), `detail` why, `ms` until the next check. */
  | "paused"
  | "resumed"
  /** The service stopped the run (a rejected key, no credits, none answering): `detail` why. */
  | "stopped"
  /**
   * A manifest's jobs taken (`jobs`): `key` its name (`run`: "", every manifest of the run as one).
   * A watch sends it again when the manifest changes, with no jobs when it is gone.
   */
  | "manifest"
  /** What the engine learned of the service's run times (`learned`), which it goes on adding to. */
  | "run-times"
  /**
   * A job found made when this run took it up, though not when the run started: another runner of
   * the fleet made it meanwhile (its video may still be fetched into this output folder).
   */
  | "made-elsewhere"
  /** What the fleet of a shared store is doing now (`fleet`), read every few seconds. */
  | "fleet";

export type Stage = LineStage | LiveStage;

export interface ProgressEvent {
  readonly stage: Stage;
  /** The job (manifest/id), or the manifest for `manifest` and `finished`. */
  readonly key?: string;
  readonly detail?: string;
  /** The file or speech a hashing, upload or speech event is about. */
  readonly asset?: string;
  readonly bytes?: number;
  /** `waiting`, `paused`: how long until reel tries again; `following`, `ended`: see there. */
  readonly ms?: number;
  /** `manifest`: its jobs. */
  readonly jobs?: readonly JobFacts[];
  /** `run-times`: read, never changed, by the display (its ETA). */
  readonly learned?: LearnedTimes;
  /** `fleet`: the fleet's counts. */
  readonly fleet?: FleetView;
}

/** Why a job of a fleet's runner waits for a slot (the `waiting` event's detail). */
export const FLEET_FULL = "the account's bound is full across the fleet";

/** A job as the display knows it before any work on it: what its ETA and its place in the counts need. */
export interface JobFacts {
  /** manifest/id. */
  readonly key: string;
  /** Its spec hash: a manifest read again with the video changed makes it another job. */
  readonly version: string;
  /** Seconds of video. */
  readonly seconds: number;
  readonly model: string;
  readonly resolution: string | undefined;
  /** Its video was made and downloaded before (the state says so). */
  readonly done: boolean;
}

export interface ProgressSink {
  /** A run's jobs (`watch`: 0, its manifests come as `manifest` events). */
  start(totalJobs: number, alreadyDone: number): void;
  event(event: ProgressEvent): void;
  /**
   * Text to keep on screen above a live display (a watch's reports of invalid manifests); written
   * as it is elsewhere. @defaultValue not given: the caller writes it itself
   */
  print?(text: string): void;
  stop(): void;
}

export const silentProgress: ProgressSink = { start() {}, event() {}, stop() {} };

const LINE_STAGES: ReadonlySet<string> = new Set<LineStage>([
  "uploaded",
  "speech",
  "submitted",
  "running",
  "done",
  "failed",
  "uncertain",
  "note",
  "finished",
]);

/** Whether `event` is one printed as a line (off a terminal, and in JSON). */
export function isLineEvent(event: ProgressEvent): event is ProgressEvent & { stage: LineStage } {
  return LINE_STAGES.has(event.stage);
}
