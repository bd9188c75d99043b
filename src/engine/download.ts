// Downloads a result video safely: into an exclusive temp file in the output folder, checked to be an
// MP4 by its first bytes and against its announced length, capped in size while streaming, then
// renamed into place. Never sends the API key (the result URL is another origin's address), follows
// redirects only to https (or an origin the caller trusts, the sandbox), resumes a broken transfer
// with a Range request when the server allows it.
import {
  closeSync,
  fdatasync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  write,
} from "node:fs";
import { unlink } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { type Dispatcher, request } from "undici";
import { ReelError } from "../errors.js";
import { tempPathFor } from "./atomic-write.js";

/**
 * - "expired": the URL no longer serves the file: ask the service for a fresh one.
 * - "retry": the transfer broke (truncated, reset, 5xx): try again, resuming where possible.
 * - "refused": the content or address is not acceptable: trying again will not help.
 */
export type DownloadFailure = "expired" | "retry" | "refused";

export class DownloadError extends ReelError {
  readonly failure: DownloadFailure;

  constructor(message: string, failure: DownloadFailure = "refused") {
    super(`E_DOWNLOAD_${failure.toUpperCase()}`, message);
    this.failure = failure;
  }

  get expired(): boolean {
    return this.failure === "expired";
  }
}

export interface DownloadOptions {
  readonly url: string;
  readonly dest: string;
  /** @defaultValue 2 GiB */
  readonly maxBytes?: number;
  /** Origins that may be fetched over plain http (the sandbox's own). */
  readonly httpOrigins?: readonly string[];
  /** Tries in all (a download costs nothing, so be persistent). @defaultValue 10 */
  readonly attempts?: number;
  readonly dispatcher?: Dispatcher;
  readonly signal?: AbortSignal;
}

const MAX_REDIRECTS = 5;

function checkUrl(url: URL, httpOrigins: readonly string[]): void {
  if (url.protocol === "https:") return;
  if (url.protocol === "http:" && httpOrigins.includes(url.origin)) return;
  throw new DownloadError(`refusing to download from ${url.origin}: only https addresses are fetched`);
}

function isMp4Start(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && Buffer.from(bytes.subarray(4, 8)).toString("latin1") === "ftyp";
}

/** Downloads `url` to `dest`, whose folder must exist (see ensureRealDir). Returns the size in bytes. */
export async function downloadVideo(options: DownloadOptions): Promise<number> {
  const maxBytes = options.maxBytes ?? 2 * 1024 ** 3;
  const attempts = options.attempts ?? 10;
  const temp = tempPathFor(options.dest);
  // Opening, closing and renaming are quick metadata calls, made synchronously: three fewer trips
  // through libuv's thread pool per video. The data itself is written asynchronously (a big video on
  // a slow disk must not stall the event loop).
  const fd = openSync(temp, "wx", 0o644);
  let written = 0;
  let open = true;
  let done = false;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        written = await transfer(options, fd, written, maxBytes);
        break;
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const retryable = !(error instanceof DownloadError) || error.failure === "retry";
        if (!retryable || attempt >= attempts) throw error;
        await sleep(Math.min(5_000, 200 * 2 ** attempt * Math.random()), undefined, {
          signal: options.signal,
        });
      }
    }
    // On disk before it takes its name: after a power cut, a video under its final name is whole
    // (some file systems would otherwise show the right size with zeroed blocks).
    await new Promise<void>((resolve, reject) =>
      fdatasync(fd, (error) => (error ? reject(error) : resolve())),
    );
    open = false;
    closeSync(fd);
    renameSync(temp, options.dest);
    done = true;
    return written;
  } finally {
    if (!done) {
      // Closed once only: a number closed twice may by then belong to another open file.
      if (open) closeSync(fd);
      await unlink(temp).catch(() => {});
    }
  }
}

/** One HTTP exchange (with redirects), appending from `offset`. Returns the total bytes written. */
async function transfer(
  options: DownloadOptions,
  fd: number,
  offset: number,
  maxBytes: number,
): Promise<number> {
  const httpOrigins = options.httpOrigins ?? [];
  let url = new URL(options.url);
  for (let hop = 0; ; hop++) {
    checkUrl(url, httpOrigins);
    const headers: Record<string, string> = {};
    if (offset > 0) headers.range = `bytes=${offset}-`;
    const response = await request(url, {
      method: "GET",
      headers,
      signal: options.signal,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const { statusCode } = response;
    if (statusCode >= 300 && statusCode < 400 && response.headers.location) {
      await response.body.dump();
      if (hop >= MAX_REDIRECTS) throw new DownloadError(`too many redirects from ${options.url}`);
      url = new URL(String(response.headers.location), url);
      continue;
    }
    if (statusCode === 403 || statusCode === 404 || statusCode === 410) {
      await response.body.dump();
      throw new DownloadError(`the result address answered ${statusCode}`, "expired");
    }
    if (statusCode !== 200 && statusCode !== 206) {
      await response.body.dump();
      throw new DownloadError(`the result address answered ${statusCode}`, "retry");
    }
    let position = offset;
    if (statusCode === 200 && offset > 0) {
      position = 0; // the server ignored Range: start over
      ftruncateSync(fd, 0);
    }
    const announced = Number(response.headers["content-length"] ?? Number.NaN);
    const expectedTotal = Number.isFinite(announced) ? position + announced : undefined;
    if (expectedTotal !== undefined && expectedTotal > maxBytes) {
      await response.body.dump();
      throw new DownloadError(`the result video is larger than the ${maxBytes}-byte limit`);
    }
    try {
      for await (const chunk of response.body) {
        const bytes = chunk as Buffer;
        if (position === 0 && !isMp4Start(bytes)) {
          const type = response.headers["content-type"] ?? "unknown type";
          throw new DownloadError(`the result address did not serve an MP4 video (got ${String(type)})`);
        }
        if (position + bytes.length > maxBytes) {
          throw new DownloadError(`the result video is larger than the ${maxBytes}-byte limit`);
        }
        await writeAt(fd, bytes, position);
        position += bytes.length;
      }
    } catch (error) {
      response.body.destroy();
      if (error instanceof DownloadError || options.signal?.aborted) throw error;
      throw new DownloadError(
        `the download broke off after ${position} bytes: ${(error as Error).message}`,
        "retry",
      );
    }
    if (expectedTotal !== undefined && position !== expectedTotal) {
      throw new DownloadError(`the download ended at ${position} of ${expectedTotal} bytes`, "retry");
    }
    if (position === 0) throw new DownloadError("the result address served an empty body", "retry");
    return position;
  }
}

/** Writes all of `bytes` at `position` of `fd`. */
async function writeAt(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    done += await new Promise<number>((resolve, reject) =>
      write(fd, bytes, done, bytes.length - done, position + done, (error, n) =>
        error ? reject(error) : resolve(n),
      ),
    );
  }
}

/** True when `path` holds a file that starts like an MP4 (a finished download). */
export function isCompleteVideo(path: string): boolean {
  // Synchronous: four quick calls; a rerun makes them for every video already done, and 10,000 trips
  // each way through libuv's thread pool took seconds.
  try {
    const info = statSync(path);
    if (!info.isFile() || info.size < 8) return false;
    const fd = openSync(path, "r");
    try {
      const head = Buffer.alloc(8);
      readSync(fd, head, 0, 8, 0);
      return isMp4Start(head);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
