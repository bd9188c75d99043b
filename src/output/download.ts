// Downloads a result video safely: into an exclusive temp file in the output folder, checked to be an
// MP4 by its first bytes and against its announced length, capped in size while streaming, then
// renamed into place. Never sends the API key (the result URL is another origin's address), follows
// redirects only to https (or an origin the caller trusts, the sandbox), resumes a broken transfer
// with a Range request when the server allows it. Hashes the video (SHA-256) as it is written, so
// that its content is known without reading it again.
import { createHash, type Hash } from "node:crypto";
import {
  closeSync,
  constants,
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
import type { Dispatcher } from "undici";
import { dirname } from "node:path";
import { BACKOFF, backoffDelay } from "../backoff.js";
import { describeTransportFailure, isCertificateFailure, isTlsFailure } from "../client/errors.js";
import { type ErrorCode, ReelError } from "../errors.js";
import { MEDIA_FORMATS, sniffFormat } from "../service/media-format.js";
import { asDiskFailure, tempPathFor } from "./atomic-write.js";
import { DEFAULT_STALL_RULE, type StallRule, watchForStall } from "./stall-watchdog.js";

/**
 * - "expired": the URL no longer serves the file: ask the service for a fresh one.
 * - "retry": the transfer broke (truncated, reset, 5xx): try again, resuming where possible.
 * - "refused": the content or address is not acceptable: trying again will not help.
 */
export type DownloadFailure = "expired" | "retry" | "refused";

const DOWNLOAD_CODES = {
  expired: "E_DOWNLOAD_EXPIRED",
  retry: "E_DOWNLOAD_RETRY",
  refused: "E_DOWNLOAD_REFUSED",
} as const satisfies Record<DownloadFailure, ErrorCode>;

export class DownloadError extends ReelError {
  readonly failure: DownloadFailure;

  constructor(message: string, failure: DownloadFailure = "refused") {
    super(DOWNLOAD_CODES[failure], message);
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
  /** The session's (see client/transport.ts): a download makes no connection pool of its own. */
  readonly dispatcher: Dispatcher;
  readonly signal?: AbortSignal;
  /** The least a transfer must receive per window. @defaultValue DEFAULT_STALL_RULE */
  readonly stall?: StallRule;
}

const MAX_REDIRECTS = 5;

function checkUrl(url: URL, httpOrigins: readonly string[]): void {
  if (url.protocol === "https:") return;
  if (url.protocol === "http:" && httpOrigins.includes(url.origin)) return;
  // The address itself (a file: URL's origin is "null"), without its query, which may hold a token.
  const shown = `${url.href.split(/[?#]/)[0]!.slice(0, 200)}`;
  const http =
    httpOrigins.length > 0 ? ` (and http from the service on this machine, ${httpOrigins[0]})` : "";
  throw new DownloadError(
    `refusing to download the video from ${shown}: only https addresses are fetched${http}`,
  );
}

/** The service's videos are MP4: recognised by their first bytes, as every upload format is. */
function isMp4Start(bytes: Uint8Array): boolean {
  return sniffFormat(bytes) === "mp4";
}

/**
 * The temp file a download fills, across its attempts: created at the first write, `size` bytes of
 * the video on disk so far (where a resumed transfer starts), `synced` once its data is on disk.
 */
interface TempFile {
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

/** A video saved under its name: what it holds, for later checks that it is still the same. */
export interface SavedVideo {
  readonly size: number;
  readonly sha256: string;
}

/**
 * Bytes gathered in memory before they are written: a video up to this size is written in one call
 * that also puts it on disk (O_DSYNC), a single trip through libuv's thread pool instead of two.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** Chunks gathered before a write whatever their size: a server sending tiny ones costs no memory. */
const WRITE_BATCH_CHUNKS = 256;
/** A redirect's (or 416's) body is let through, so the connection is reused, up to this size. */
const MAX_REDIRECT_BODY = 64 * 1024;
/** Windows has no O_DSYNC: there, every video is fdatasync'ed before its rename. */
const O_DSYNC: number = constants.O_DSYNC ?? 0;

/**
 * Downloads `url` to `dest`, whose folder must exist (see ensureRealDir). A disk that refuses the
 * writes (full, read-only...) is an OutputDiskError, never tried again.
 */
export async function downloadVideo(options: DownloadOptions): Promise<SavedVideo> {
  const maxBytes = options.maxBytes ?? 2 * 1024 ** 3;
  const attempts = options.attempts ?? 10;
  const file: TempFile = {
    path: tempPathFor(options.dest),
    created: false,
    fd: undefined,
    size: 0,
    hash: createHash("sha256"),
    synced: false,
  };
  let done = false;
  try {
    for (let failed = 0; ;) {
      const before = file.size;
      try {
        await transfer(options, file, maxBytes);
        break;
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const disk = asDiskFailure(error, dirname(options.dest));
        if (disk) throw disk; // every try would meet the same disk
        const retryable = !(error instanceof DownloadError) || error.failure === "retry";
        if (!retryable) throw error;
        // It got further: a flaky link may take many tries.
        failed = file.size > before ? 0 : failed + 1;
        if (failed >= attempts) throw error;
        await sleep(backoffDelay(BACKOFF.downloadRetry, Math.max(0, failed - 1)), undefined, {
          signal: options.signal,
        });
      }
    }
    const fd = file.fd!;
    try {
      // On disk before it takes its name: after a power cut, a video under its final name is whole
      // (some file systems would otherwise show the right size with zeroed blocks).
      if (!file.synced) {
        await new Promise<void>((resolve, reject) =>
          fdatasync(fd, (error) => (error ? reject(error) : resolve())),
        );
      }
      // Closing and renaming are quick metadata calls, made synchronously.
      file.fd = undefined;
      closeSync(fd);
      renameSync(file.path, options.dest);
    } catch (error) {
      throw asDiskFailure(error, dirname(options.dest)) ?? error;
    }
    done = true;
    return { size: file.size, sha256: file.hash.digest("hex") };
  } finally {
    if (!done) {
      if (file.fd !== undefined) {
        // Closed once only: a number closed twice may by then belong to another open file.
        const fd = file.fd;
        file.fd = undefined;
        try {
          closeSync(fd);
        } catch {
          // the unlink below matters more
        }
      }
      if (file.created) await unlink(file.path).catch(() => {});
    }
  }
}

/** Follows redirects (each checked) to the address that serves the video, and saves it into `file`. */
async function transfer(options: DownloadOptions, file: TempFile, maxBytes: number): Promise<void> {
  const httpOrigins = options.httpOrigins ?? [];
  let url = new URL(options.url);
  for (let hop = 0; ; hop++) {
    checkUrl(url, httpOrigins);
    const location = await fetchInto(url, file, maxBytes, options);
    if (location === undefined) return;
    if (hop >= MAX_REDIRECTS) throw new DownloadError(`too many redirects from ${options.url}`);
    try {
      url = new URL(location, url);
    } catch {
      throw new DownloadError(`the result address redirected to an invalid address: ${location}`);
    }
  }
}

/**
 * One HTTP exchange through undici's dispatch API: no Node stream per response, and the body goes
 * straight to the file, WRITE_BATCH_BYTES at a time, with the socket paused while a write is under
 * way. Appends from `file.size` (a Range request) when a previous attempt saved part of the video.
 * Resolves with the location of a redirect, or undefined once the body is saved.
 */
function fetchInto(
  url: URL,
  file: TempFile,
  maxBytes: number,
  options: DownloadOptions,
): Promise<string | undefined> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let location: string | undefined;
    let ignoredBytes = 0;
    let alreadyWhole = false; // a 416 saying the file on disk is the whole video
    let contentType = "unknown type";
    let expectedTotal: number | undefined;
    let position = file.size; // bytes of the video received, written or gathered
    let signatureChecked = position > 0; // a file on disk starts with a checked signature
    let gathered: Buffer[] = [];
    let gatheredBytes = 0;
    let writing = false;
    let ended = false;
    let settled = false;
    // Not retried: a server that drips would otherwise be given ten more tries of its own pace.
    const watchdog = watchForStall(options.stall ?? DEFAULT_STALL_RULE, (why) =>
      fail(new DownloadError(`the download ${why}; the next run fetches it again`)),
    );

    const settle = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      watchdog.stop();
      signal?.removeEventListener("abort", onAbort);
      if (error) reject(error);
      else resolve(location);
    };
    // Before the request is under way nothing can be writing: give up at once (no connect timeout).
    const onAbort = (): void => {
      if (controller) controller.abort(signal!.reason as Error);
      else settle(signal!.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    /** Stops the exchange; `settle` runs once no write is under way (the file stays consistent). */
    let failure: Error | undefined;
    const fail = (error: Error): void => {
      failure ??= error;
      if (!ended) controller?.abort(failure);
      if (!writing) settle(failure);
    };
    /** The part on disk is not the start of what this server serves: the next attempt starts over. */
    const startOver = (): void => {
      if (file.fd !== undefined) ftruncateSync(file.fd, 0);
      file.size = 0;
      file.hash = createHash("sha256");
      position = 0;
      signatureChecked = false;
    };
    const batchFull = (): boolean =>
      gatheredBytes >= WRITE_BATCH_BYTES || gathered.length >= WRITE_BATCH_CHUNKS;

    const write = (last: boolean): void => {
      const chunks = gathered;
      const bytes = gatheredBytes;
      gathered = [];
      gatheredBytes = 0;
      if (bytes === 0) {
        if (last) finish();
        return;
      }
      if (file.fd === undefined) {
        // Exclusive: never through anything planted at the temp name. When the whole video is in
        // memory, it is written and put on disk by the same call (O_DSYNC).
        const dsync = last ? O_DSYNC : 0;
        try {
          file.fd = openSync(
            file.path,
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | dsync,
            0o644,
          );
        } catch (error) {
          fail(error as Error);
          return;
        }
        file.created = true;
        file.synced = dsync !== 0;
      }
      writing = true;
      if (!ended) controller?.pause();
      const at = file.size;
      const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
      writeAt(file.fd, data, at).then(
        () => {
          writing = false;
          file.size = at + bytes;
          file.hash.update(data); // once on disk: a failed write must not count in the hash
          if (failure) settle(failure);
          else if (ended) write(true);
          else if (batchFull()) write(false);
          else controller?.resume();
        },
        (error: unknown) => {
          writing = false;
          fail(error as Error);
        },
      );
    };

    const finish = (): void => {
      if (location !== undefined) {
        settle(undefined);
      } else if (position > 0 && !signatureChecked) {
        settle(
          new DownloadError(
            `the result address did not serve ${MEDIA_FORMATS.mp4.words} (got ${contentType})`,
          ),
        );
      } else if (expectedTotal !== undefined && position !== expectedTotal) {
        settle(new DownloadError(`the download ended at ${position} of ${expectedTotal} bytes`, "retry"));
      } else if (position === 0) {
        settle(new DownloadError("the result address served an empty body", "retry"));
      } else {
        settle(undefined);
      }
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (signal?.aborted) c.abort(signal.reason as Error);
      },
      onResponseStart(c, statusCode, headers) {
        if (statusCode < 200) return; // 1xx informational: the real answer follows
        const redirect = headers.location;
        if (statusCode >= 300 && statusCode < 400 && redirect) {
          location = String(redirect); // its body (if any) is let through unread, so the socket is reused
          return;
        }
        if (statusCode === 403 || statusCode === 404 || statusCode === 410) {
          fail(new DownloadError(`the result address answered ${statusCode}`, "expired"));
          return;
        }
        const range = /^bytes (?:(\d+)-\d+|\*)\/(\d+|\*)$/.exec(String(headers["content-range"] ?? ""));
        if (
          statusCode === 416 &&
          range?.[2] !== undefined &&
          Number(range[2]) === file.size &&
          file.size > 0
        ) {
          alreadyWhole = true; // asked for the bytes after the end: the video is all here
          expectedTotal = file.size;
          return;
        }
        if (statusCode !== 200 && statusCode !== 206) {
          if (statusCode === 416) startOver();
          fail(new DownloadError(`the result address answered ${statusCode}`, "retry"));
          return;
        }
        if (statusCode === 200 && file.size > 0) startOver(); // the server ignored Range
        let total: number | undefined;
        if (statusCode === 206) {
          // Only the part asked for may be appended; anything else would stitch a corrupt video.
          if (range?.[1] === undefined || Number(range[1]) !== file.size) {
            const got = String(headers["content-range"] ?? "no Content-Range");
            startOver();
            fail(new DownloadError(`the result address answered another range than asked (${got})`, "retry"));
            return;
          }
          if (range[2] !== "*") total = Number(range[2]);
        }
        contentType = String(headers["content-type"] ?? contentType);
        const announced = Number(headers["content-length"] ?? Number.NaN);
        expectedTotal = total ?? (Number.isFinite(announced) ? position + announced : undefined);
        if (expectedTotal !== undefined && expectedTotal > maxBytes) {
          c.abort(new DownloadError(`the result video is larger than the ${maxBytes}-byte limit`));
        }
      },
      onResponseData(c, chunk) {
        watchdog.add(chunk.length);
        if (failure) return;
        if (location !== undefined || alreadyWhole) {
          // A redirect's or a 416's body: not the video. A long one is cut (the answer is known).
          ignoredBytes += chunk.length;
          if (ignoredBytes > MAX_REDIRECT_BODY) {
            settle(undefined);
            c.abort(new DownloadError("the redirect's body was cut"));
          }
          return;
        }
        if (position + chunk.length > maxBytes) {
          fail(new DownloadError(`the result video is larger than the ${maxBytes}-byte limit`));
          return;
        }
        gathered.push(chunk);
        gatheredBytes += chunk.length;
        position += chunk.length;
        if (!signatureChecked && position >= 8) {
          // The file's first bytes, all in memory still (nothing is written before they are checked).
          if (!isMp4Start(gathered.length === 1 ? chunk : Buffer.concat(gathered))) {
            fail(
              new DownloadError(
                `the result address did not serve ${MEDIA_FORMATS.mp4.words} (got ${contentType})`,
              ),
            );
            return;
          }
          signatureChecked = true;
        }
        if (writing)
          c.pause(); // resumed when the write under way ends
        else if (batchFull() && signatureChecked) write(false);
      },
      onResponseEnd() {
        ended = true;
        if (writing) return; // the write under way goes on from here
        if (failure) settle(failure);
        else write(true);
      },
      onResponseError(_c, error) {
        ended = true;
        // In reel's words, on one line (OpenSSL's text spans lines); a refused certificate is final.
        const why =
          error instanceof DownloadError || signal?.aborted
            ? error
            : isTlsFailure(error)
              ? new DownloadError(
                  describeTransportFailure(error, url.host),
                  isCertificateFailure(error) ? "refused" : "retry",
                )
              : new DownloadError(
                  `the download broke off after ${position} bytes: ${describeTransportFailure(error)}`,
                  "retry",
                );
        failure ??= why;
        if (writing) return; // settled when it ends
        // A broken transfer: what arrived is kept, so that the next attempt resumes after it.
        const resumable = failure instanceof DownloadError && failure.failure === "retry";
        if (gatheredBytes > 0 && signatureChecked && resumable) write(false);
        else settle(failure);
      },
    };
    try {
      const headers: Record<string, string> = {};
      if (file.size > 0) headers.range = `bytes=${file.size}-`;
      options.dispatcher.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: "GET",
          headers,
          // undici's own defaults, as downloads had before they shared the session's dispatcher
          // (whose 60 s suit JSON calls); the stall rule above bounds a slow transfer anyway.
          headersTimeout: DOWNLOAD_SILENCE_MS,
          bodyTimeout: DOWNLOAD_SILENCE_MS,
        },
        handler,
      );
    } catch (error) {
      settle(error as Error);
    }
  });
}

/** The longest silence a download sits through before its answer or between its bytes. */
const DOWNLOAD_SILENCE_MS = 300_000;

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
