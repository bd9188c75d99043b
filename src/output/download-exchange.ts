// What the parts of one download exchange share (one HTTP request and its answer, made by fetchInto in
// download.ts): the temp file the video goes into across attempts, and where this answer stands.
// The answer's handler (download-answer.ts) and the writes (download-writes.ts) are functions of it.
import { createHash, type Hash } from "node:crypto";
import { ftruncateSync } from "node:fs";
import type { Dispatcher } from "undici";
import { sniffFormat } from "../service-contract/media-format.js";
import type { StallWatchdog } from "./stall-watchdog.js";

/**
 * The temp file a download fills, across its attempts: created at the first write, `size` bytes of
 * the video on disk so far (where a resumed transfer starts), `synced` once its data is on disk.
 */
export interface TempFile {
  readonly path: string;
  /** Whether the file exists (it is removed if the download does not complete). */
  created: boolean;
  fd: number | undefined;
  /** Bytes of the video on disk; 0, or at least the 8 whose MP4 signature was checked. */
  size: number;
  /** SHA-256 of the `size` bytes on disk, fed as each write lands (a resume goes on from it). */
  hash: Hash;
  synced: boolean;
}

/** One exchange: its request, and what its answer has brought so far. */
export interface Exchange {
  readonly url: URL;
  readonly file: TempFile;
  readonly maxBytes: number;
  readonly signal: AbortSignal | undefined;
  /** Not retried: a server that drips would otherwise be given ten more tries of its own pace. */
  readonly watchdog: StallWatchdog;
  /** Ends the exchange (once): resolves with `location`, or rejects with `error`. */
  readonly settle: (error: Error | undefined) => void;
  controller: Dispatcher.DispatchController | undefined;
  /** A redirect's address. */
  location: string | undefined;
  /** Bytes of a body that is not the video (a redirect's, a 416's). */
  ignoredBytes: number;
  /** A 416 saying the file on disk is the whole video. */
  alreadyWhole: boolean;
  contentType: string;
  expectedTotal: number | undefined;
  /** Bytes of the video received, written or gathered. */
  position: number;
  /** A file on disk starts with a checked signature. */
  signatureChecked: boolean;
  /** Received, not written yet. */
  gathered: Buffer[];
  gatheredBytes: number;
  writing: boolean;
  ended: boolean;
  failure: Error | undefined;
}

/**
 * Bytes gathered in memory before they are written: a video up to this size is written in one call
 * that also puts it on disk (O_DSYNC), a single trip through libuv's thread pool instead of two.
 */
export const WRITE_BATCH_BYTES = 1024 * 1024;
/** Chunks gathered before a write whatever their size: a server sending tiny ones costs no memory. */
export const WRITE_BATCH_CHUNKS = 256;
/** A redirect's (or 416's) body is let through, so the connection is reused, up to this size. */
export const MAX_REDIRECT_BODY = 64 * 1024;

/** The service's videos are MP4: recognised by their first bytes, as every upload format is. */
export function isMp4Start(bytes: Uint8Array): boolean {
  return sniffFormat(bytes) === "mp4";
}

/** Stops the exchange; `settle` runs once no write is under way (the file stays consistent). */
export function fail(ex: Exchange, error: Error): void {
  ex.failure ??= error;
  if (!ex.ended) ex.controller?.abort(ex.failure);
  if (!ex.writing) ex.settle(ex.failure);
}

/** The part on disk is not the start of what this server serves: the next attempt starts over. */
export function startOver(ex: Exchange): void {
  const { file } = ex;
  if (file.fd !== undefined) ftruncateSync(file.fd, 0);
  file.size = 0;
  file.hash = createHash("sha256");
  ex.position = 0;
  ex.signatureChecked = false;
}
