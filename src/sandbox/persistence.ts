// What a persistent sandbox writes down so that the next sandbox on the same data dir continues
// where it stopped, and the do-nothing version every other sandbox uses. The in-memory tables stay
// the source of truth while a sandbox runs; this is a write-through copy, read once at start.
//
// The rule every caller keeps: write here first, then change memory, then answer. So no response
// shows a client an id, a status or a balance that a sandbox restarted after a kill -9 would not
// know, and a write that throws (disk full) stops the change before memory shows it.
import type { Id, TaskStatus } from "../service-contract/api-types.js";
import type { MediaFormat } from "../service-contract/media-format.js";
import type { GenerationPlan } from "./validate-generation.js";

/** Where an asset's file came from; result videos own no file (they share the fixture MP4). */
export type AssetOrigin = "upload" | "speech" | "result";

export interface StoredAsset {
  readonly id: Id;
  readonly origin: AssetOrigin;
  readonly format: MediaFormat;
  /** Name of the file in the data dir's `assets/` folder; undefined for result videos. */
  readonly fileName: string | undefined;
  readonly size: number;
  /** ETag without quotes. */
  readonly etag: string;
  /** sha256 of the content (hex), known for uploads. */
  readonly sha256: string | undefined;
  /** The unguessable part of the file address; the host part is added at response time. */
  readonly token: string;
  /** The task whose result this video is. */
  readonly taskId: Id | undefined;
  readonly deleted: boolean;
}

/** A task and its timeline, in wall-clock milliseconds (Date.now()). */
export interface StoredTask {
  readonly id: Id;
  /** The request body as submitted (sorted keys), kept so a data dir can be inspected by hand. */
  readonly canonicalBody: string;
  /** Model, seconds and the referenced asset ids. */
  readonly plan: GenerationPlan;
  /** Credits charged at submission, given back if the task fails. */
  readonly cost: number;
  readonly status: TaskStatus;
  readonly createdAt: number;
  /** When PreProcessing ends, fixed at creation. */
  readonly preProcessingEndsAt: number;
  /** When the task entered Pending: the order in which slots are handed out. */
  readonly queuedAt: number | undefined;
  readonly startedAt: number | undefined;
  /** When Running ends, fixed when it starts. */
  readonly runningEndsAt: number | undefined;
  readonly finishedAt: number | undefined;
  readonly failReason: string | undefined;
  readonly resultVideoId: Id | undefined;
}

/** Everything a previous sandbox left in the data dir. */
export interface PersistedState {
  /** The next id to hand out. */
  readonly nextId: bigint;
  /** `undefined` is an unlimited balance. */
  readonly credits: number | undefined;
  readonly assets: readonly StoredAsset[];
  readonly tasks: readonly StoredTask[];
}

export interface SandboxPersistence {
  /** Runs `fn` so that all its writes commit together or not at all; nested calls join the outer one. */
  atomically<T>(fn: () => T): T;
  saveNextId(next: bigint): void;
  saveCredits(balance: number | undefined): void;
  saveAsset(asset: StoredAsset): void;
  markAssetDeleted(id: Id): void;
  saveTask(task: StoredTask): void;
  /** Releases the data dir for the next sandbox. Idempotent. */
  close(): void;
}

/** The default: nothing is kept, and nothing costs more than a call to an empty function. */
export const NO_PERSISTENCE: SandboxPersistence = {
  atomically: (fn) => fn(),
  saveNextId: () => {},
  saveCredits: () => {},
  saveAsset: () => {},
  markAssetDeleted: () => {},
  saveTask: () => {},
  close: () => {},
};
