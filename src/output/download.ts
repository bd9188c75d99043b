// Downloads a result video safely: into an exclusive temp file in the output folder, checked to be an
// MP4 by its first bytes and against its announced length, capped in size while streaming, then
// renamed into place. Never sends the API key (the result URL is another origin's address), follows
// redirects only to https (or an origin the caller trusts, the sandbox), resumes a broken transfer
// with a Range request when the server allows it. Hashes the video (SHA-256) as it is written, so
// that its content is known without reading it again.
import { createHash } from "node:crypto";
import { closeSync, fdatasync, openSync, readSync, renameSync, statSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { dirname } from "node:path";
import { BACKOFF, backoffDelay } from "../backoff.js";
import { asDiskFailure, tempPathFor } from "./atomic-write.js";
import { answerHandler } from "./download-answer.js";
import { DownloadError } from "../errors/output.js";
import { type Exchange, fail, isMp4Start, type TempFile } from "./download-exchange.js";
import { DEFAULT_STALL_RULE, type StallRule, watchForStall } from "./stall-watchdog.js";

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

/** A video saved under its name: what it holds, for later checks that it is still the same. */
export interface SavedVideo {
  readonly size: number;
  readonly sha256: string;
}

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
 * straight to the file (download-answer.ts, download-writes.ts), with the socket paused while a
 * write is under way. Appends from `file.size` (a Range request) when a previous attempt saved part of the video.
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
    let settled = false;
    const ex: Exchange = {
      url,
      file,
      maxBytes,
      signal,
      watchdog: watchForStall(options.stall ?? DEFAULT_STALL_RULE, (why) =>
        fail(ex, new DownloadError(`the download ${why}; the next run fetches it again`)),
      ),
      settle: (error) => {
        if (settled) return;
        settled = true;
        ex.watchdog.stop();
        signal?.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve(ex.location);
      },
      controller: undefined,
      location: undefined,
      ignoredBytes: 0,
      alreadyWhole: false,
      contentType: "unknown type",
      expectedTotal: undefined,
      position: file.size,
      signatureChecked: file.size > 0,
      gathered: [],
      gatheredBytes: 0,
      writing: false,
      ended: false,
      failure: undefined,
    };
    // Before the request is under way nothing can be writing: give up at once (no connect timeout).
    const onAbort = (): void => {
      if (ex.controller) ex.controller.abort(signal!.reason as Error);
      else ex.settle(signal!.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
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
        answerHandler(ex),
      );
    } catch (error) {
      ex.settle(error as Error);
    }
  });
}

/** The longest silence a download sits through before its answer or between its bytes. */
const DOWNLOAD_SILENCE_MS = 300_000;

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
