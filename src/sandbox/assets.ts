// The emulator's asset table and the file addresses it hands out. Files are served under an
// unguessable token, without auth, the way a CDN serves signed URLs; a deleted asset keeps its
// record (so a later generation can fail with "was deleted") but loses its file and address.
// Addresses are built from the base URL when asked, never stored whole: a persistent sandbox
// restarted on another port must hand out addresses that work on the new port. They can be made to
// expire (expireUrls), so that clients can be tested on asking for a fresh one.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Id } from "../service-contract/api-types.js";
import {
  kindOf,
  kindWords,
  MEDIA_FORMATS,
  type MediaFormat,
  type MediaKind,
} from "../service-contract/media-format.js";
import { legacyResultVideo, type ResultVideos } from "./result-video.js";
import {
  type AssetOrigin,
  NO_PERSISTENCE,
  type SandboxPersistence,
  type StoredAsset,
} from "./persistence.js";

/** A file the sandbox serves at `/files/<token>`. */
export interface ServedFile {
  readonly path: string;
  readonly size: number;
  readonly format: MediaFormat;
  /** Strong validator, so a client resuming with If-Range never stitches two different files. */
  readonly etag: string;
  /** Set for result videos: downloads are timed per task. */
  readonly taskId?: Id;
}

export interface AssetRecord {
  readonly id: Id;
  readonly kind: MediaKind;
  readonly format: MediaFormat;
  readonly token: string;
  /** Result videos all share the committed fixture file, which is never removed. */
  readonly origin: AssetOrigin;
  readonly file: ServedFile;
  deleted: boolean;
}

export interface NewAsset {
  readonly id: Id;
  readonly origin: AssetOrigin;
  readonly format: MediaFormat;
  /** For uploads and speech, a file in the data dir's `assets/` folder. */
  readonly path: string;
  readonly size: number;
  readonly etag: string;
  readonly sha256?: string;
  readonly taskId?: Id;
}

/** Where restored records find their files. */
export interface AssetFiles {
  readonly assetDir: string;
  /** Result videos, by the file name recorded (none: a sandbox of an older reel, whose tasks all shared one). */
  readonly results: ResultVideos;
}

function servedFile(format: MediaFormat, path: string, size: number, etag: string, taskId?: Id): ServedFile {
  return { path, size, format, etag: `"${etag}"`, ...(taskId !== undefined ? { taskId } : {}) };
}

export class AssetStore {
  private readonly records = new Map<Id, AssetRecord>();
  private readonly files = new Map<string, ServedFile>();
  private readonly baseUrl: () => string;
  private readonly persistence: SandboxPersistence;
  /** Addresses carry the generation they were handed out in; older ones have expired. */
  private urlGeneration = 0;

  constructor(baseUrl: () => string, persistence: SandboxPersistence = NO_PERSISTENCE) {
    this.baseUrl = baseUrl;
    this.persistence = persistence;
  }

  add(asset: NewAsset): AssetRecord {
    const token = `${randomBytes(16).toString("hex")}.${MEDIA_FORMATS[asset.format].extension}`;
    this.persistence.saveAsset({
      id: asset.id,
      origin: asset.origin,
      format: asset.format,
      fileName: basename(asset.path),
      size: asset.size,
      etag: asset.etag,
      sha256: asset.sha256,
      token,
      taskId: asset.taskId,
      deleted: false,
    });
    const file = servedFile(asset.format, asset.path, asset.size, asset.etag, asset.taskId);
    return this.remember(asset.id, asset.origin, token, file, false);
  }

  /** Takes back the records a persistent sandbox stored before it stopped. */
  restore(stored: readonly StoredAsset[], where: AssetFiles): void {
    const { assetDir, results } = where;
    for (const asset of stored) {
      let file: ServedFile;
      if (asset.origin === "result") {
        // Its shape and length, kept under results/; or the one fixture every earlier result shared,
        // as this build has it (it may have moved since: src/ vs dist/).
        const video =
          (asset.fileName !== undefined ? results.byName(asset.fileName) : undefined) ?? legacyResultVideo();
        file = servedFile(asset.format, video.path, video.size, video.etag, asset.taskId);
      } else {
        file = servedFile(
          asset.format,
          join(assetDir, asset.fileName ?? ""),
          asset.size,
          asset.etag,
          asset.taskId,
        );
      }
      this.remember(asset.id, asset.origin, asset.token, file, asset.deleted);
    }
  }

  private remember(
    id: Id,
    origin: AssetOrigin,
    token: string,
    file: ServedFile,
    deleted: boolean,
  ): AssetRecord {
    const record: AssetRecord = {
      id,
      kind: kindOf(file.format),
      format: file.format,
      token,
      origin,
      file,
      deleted,
    };
    this.records.set(id, record);
    if (!deleted) this.files.set(token, file);
    return record;
  }

  /** The address of a record's file on the server as it listens now. */
  url(record: AssetRecord): string {
    return `${this.baseUrl()}/files/${record.token}?v=${this.urlGeneration}`;
  }

  /** The address of asset `id`, deleted or not (a deleted one no longer serves anything). */
  urlOf(id: Id): string | undefined {
    const record = this.records.get(id);
    return record && this.url(record);
  }

  /** Names of the files in `assets/` that live records serve. */
  liveFileNames(): ReadonlySet<string> {
    const names = new Set<string>();
    for (const record of this.records.values()) {
      if (!record.deleted && record.origin !== "result") names.add(basename(record.file.path));
    }
    return names;
  }

  /** Live assets only. */
  get(id: Id): AssetRecord | undefined {
    const record = this.records.get(id);
    return record && !record.deleted ? record : undefined;
  }

  /** Deletes a live asset; false when there is none. The file goes at once, like its address. */
  async delete(id: Id): Promise<boolean> {
    const record = this.get(id);
    if (!record) return false;
    this.persistence.markAssetDeleted(id);
    record.deleted = true;
    this.files.delete(record.token);
    if (record.origin !== "result") await rm(record.file.path, { force: true });
    return true;
  }

  file(token: string): ServedFile | undefined {
    return this.files.get(token);
  }

  /** Every address handed out so far stops working, as a CDN's signed URLs do when they expire. */
  expireUrls(): void {
    this.urlGeneration++;
  }

  /** Whether an address with this `v` query value has expired (no value: an address from before). */
  expired(generation: string | null): boolean {
    return generation !== null && Number(generation) !== this.urlGeneration;
  }

  /** Why `id` cannot be used as `kind` by a generation, or undefined when it can. */
  problemWith(id: Id, kind: MediaKind): string | undefined {
    const record = this.records.get(id);
    if (!record) return `asset ${id} not found`;
    if (record.deleted) return `asset ${id} was deleted`;
    if (record.kind !== kind) return `asset ${id} is ${kindWords(record.kind)}, ${kind} expected`;
    return undefined;
  }
}
