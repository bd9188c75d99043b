// The emulator's asset table and the file addresses it hands out. Files are served under an
// unguessable token, without auth, the way a CDN serves signed URLs; a deleted asset keeps its
// record (so a later generation can fail with "was deleted") but loses its file and address.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import type { Id } from "../service/api-types.js";
import type { MediaFormat, MediaKind } from "../service/media-format.js";
import { MEDIA_KIND } from "../service/media-format.js";

export const CONTENT_TYPE: Readonly<Record<MediaFormat, string>> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  mp4: "video/mp4",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
};

const EXTENSION: Readonly<Record<MediaFormat, string>> = {
  jpeg: "jpg",
  png: "png",
  gif: "gif",
  webp: "webp",
  mp4: "mp4",
  mp3: "mp3",
  wav: "wav",
  ogg: "ogg",
};

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
  readonly url: string;
  readonly token: string;
  /** False for result videos, which all share the committed fixture file. */
  readonly ownsFile: boolean;
  readonly file: ServedFile;
  deleted: boolean;
}

export interface NewAsset {
  readonly id: Id;
  readonly format: MediaFormat;
  readonly path: string;
  readonly size: number;
  readonly etag: string;
  readonly ownsFile: boolean;
  readonly taskId?: Id;
}

export class AssetStore {
  private readonly records = new Map<Id, AssetRecord>();
  private readonly files = new Map<string, ServedFile>();
  private readonly baseUrl: () => string;

  constructor(baseUrl: () => string) {
    this.baseUrl = baseUrl;
  }

  add(asset: NewAsset): AssetRecord {
    const token = `${randomBytes(16).toString("hex")}.${EXTENSION[asset.format]}`;
    const file: ServedFile = {
      path: asset.path,
      size: asset.size,
      format: asset.format,
      etag: `"${asset.etag}"`,
      ...(asset.taskId !== undefined ? { taskId: asset.taskId } : {}),
    };
    const record: AssetRecord = {
      id: asset.id,
      kind: MEDIA_KIND[asset.format],
      format: asset.format,
      url: `${this.baseUrl()}/files/${token}`,
      token,
      ownsFile: asset.ownsFile,
      file,
      deleted: false,
    };
    this.records.set(asset.id, record);
    this.files.set(token, file);
    return record;
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
    record.deleted = true;
    this.files.delete(record.token);
    if (record.ownsFile) await rm(record.file.path, { force: true });
    return true;
  }

  file(token: string): ServedFile | undefined {
    return this.files.get(token);
  }

  /** Why `id` cannot be used as `kind` by a generation, or undefined when it can. */
  problemWith(id: Id, kind: MediaKind): string | undefined {
    const record = this.records.get(id);
    if (!record) return `asset ${id} not found`;
    if (record.deleted) return `asset ${id} was deleted`;
    if (record.kind !== kind) return `asset ${id} is ${KIND_PHRASE[record.kind]}, ${kind} expected`;
    return undefined;
  }
}

const KIND_PHRASE: Readonly<Record<MediaKind, string>> = {
  image: "an image",
  video: "a video",
  audio: "audio",
};
