// What the parts of the asset resolver share (assets.ts makes it once per engine): the options as
// given, the store, the client, the queue of transfers, the stop signal, the critical section per
// content, speech or address (`once`), and the wait for another runner's intent. Each part
// (upload.ts, remote-fetch.ts, speech.ts) is a set of functions of this context.
import type PQueue from "p-queue";
import type { Budget } from "../budget/index.js";
import type { ServiceClient } from "../client/index.js";
import type { IntentCoordination } from "../fleet/index.js";
import type { FileStamp } from "../manifest/validate/media-file.js";
import type { Id } from "../service-contract/api-types.js";
import type { JobStore } from "../state/job-store.js";
import type { ProgressSink } from "./progress.js";

/** A file to upload, and what it was judged to be when checked. */
export interface CheckedFile {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  /** The file that was checked (local files); a fetched copy is known by its hash alone. */
  readonly stamp?: FileStamp;
  /** The file as the user knows it, for messages. */
  readonly source: string;
  /** What the user named (a path, or the address of a fetched file), for the progress line. */
  readonly named: string;
}

export interface AssetResolverOptions {
  readonly client: ServiceClient;
  readonly store: JobStore;
  /**
   * Whether an intent another writer holds is a live runner's (see fleet/coordination.ts).
   * @defaultValue a runner alone on its state file
   */
  readonly intents?: IntentCoordination;
  /** Bounds concurrent uploads and speech calls. */
  readonly queue: PQueue;
  /** Where remote sources are kept once fetched. */
  readonly cacheDir: string;
  readonly resubmitUncertain: boolean;
  /** A capped run's budget: each speech call is counted against it first. */
  readonly budget?: Budget | undefined;
  readonly signal: AbortSignal;
  /**
   * Aborts a costed call (speech) already on the wire: later than `signal`, so an answer on its
   * way is still recorded; an abort then leaves the speech uncertain, never resent blindly.
   */
  readonly costedSignal: AbortSignal;
  /** @defaultValue 512 MiB */
  readonly maxRemoteBytes?: number;
  /** Fetch https sources from loopback, link-local and private addresses too. @defaultValue false */
  readonly allowPrivateSources?: boolean;
  /** Told of each upload and speech call under way (the live display). */
  readonly progress?: ProgressSink;
  /** `source`: the file's path, or the address it was fetched from. */
  readonly onUpload?: (source: string, sha256: string) => void;
  readonly onSpeech?: (voiceId: string, text: string) => void;
}

/** The resolver's shared parts (see the top of this file). */
export interface AssetContext {
  readonly options: AssetResolverOptions;
  readonly client: ServiceClient;
  readonly store: JobStore;
  /** Bounds concurrent uploads and speech calls. */
  readonly queue: PQueue;
  readonly signal: AbortSignal;
  readonly progress: ProgressSink;
  readonly intents: IntentCoordination;
  /**
   * The critical section of each content, speech and address: the store is read, and what follows
   * from it written, by one task at a time per key. The store is asynchronous, so another task could
   * otherwise read the same "not uploaded yet" between this one's read and its write, and pay for
   * the same speech (or upload the same file) twice. The key is released only once the result is
   * recorded (`recordAsset`, `markSpeechDone` awaited inside `work`): a later caller reads it.
   * Across processes, the intents (markUploading, markSpeechCreating) are compare-and-set.
   */
  once(key: string, work: () => Promise<Id>): Promise<Id>;
  /**
   * In a fleet, another runner is uploading this content or making this speech (its intent won):
   * this one waits for its answer rather than pay twice, taking over the work of runners gone
   * silent meanwhile (their intents are then dropped, or their speech uncertain).
   */
  waitForOtherRunner(turn: number): Promise<void>;
}

/** How progress events name a speech call (`asset`). */
export function speechAsset(voiceId: string, text: string): string {
  return `speech:${voiceId}:${text}`;
}
