// Uploaded assets and speech: the intents that guard an upload and a costed speech call (see
// ../job-store.ts for what every backend guarantees of an intent).
import type { SpeechCharge } from "./budgets.js";

export interface SpeechRow {
  readonly state: "creating" | "done" | "uncertain";
  readonly asset_id: string | null;
  readonly duration: number | null;
  readonly error: string | null;
}

/** Uploaded assets and their intents, scoped by service. */
export interface AssetRecords {
  findAsset(sha256: string): Promise<string | undefined>;
  /**
   * The intent of an upload. One intent wins: an intent this store did not write (intents of a dead
   * run are taken at start, see takeInterruptedUploads) is another process's upload of the same
   * content, under way, and this one throws ClaimLostError instead of uploading a second copy.
   */
  markUploading(sha256: string): Promise<void>;
  /** An upload the service refused for certain: nothing to report at the next start. */
  forgetUploadIntent(sha256: string): Promise<void>;
  /**
   * Uploads whose intent was written but whose asset id was not: a run died during them. They will
   * be uploaded again (an extra copy on the service, no credits). Returns how many, and forgets them.
   */
  takeInterruptedUploads(): Promise<number>;
  recordAsset(sha256: string, assetId: string, size: number): Promise<void>;
  /** Whether reel uploaded this asset, or made it as speech, on this service. */
  madeAsset(assetId: string): Promise<boolean>;
  /** The service lost this asset (deleted): the next use uploads it again. */
  forgetAssetId(assetId: string): Promise<void>;
}

/** Speech made by the service (a costed call), scoped by service. */
export interface SpeechRecords {
  findSpeech(voiceId: string, text: string): Promise<SpeechRow | undefined>;
  /**
   * Write-ahead intent of a costed speech call: resolves once it is durable. A compare-and-set: made
   * only where no speech row is, or over an `uncertain` one (--resubmit-uncertain). A row `creating`
   * or `done` was written by another process since the caller looked: it throws ClaimLostError, and
   * the speech is not paid for twice. `charge`: as markSubmitting's, recorded with the intent.
   */
  markSpeechCreating(voiceId: string, text: string, charge?: SpeechCharge): Promise<void>;
  markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): Promise<void>;
  markSpeechUncertain(voiceId: string, text: string, error: string): Promise<void>;
  /** A speech call that failed for certain (refused): nothing was made, forget the intent. */
  clearSpeech(voiceId: string, text: string): Promise<void>;
  /** Speech intents without an answer from a run that died: they may have been made. */
  markInterruptedSpeechUncertain(): Promise<number>;
}
