// Turns the asset references of job specs into service asset ids: each distinct file content is
// uploaded once per service (across names, manifests and runs, keyed by sha256 in the state file),
// each remote source fetched once, each (voice, text) made into speech once. Concurrent requests for
// the same content share one in-flight promise.
import { type Budget, BudgetStoppedError, type Reservation } from "../budget/index.js";
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { type FileHandle, mkdir, rename, stat, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type PQueue from "p-queue";
import { request } from "undici";
import { BACKOFF, backoffDelay } from "../backoff.js";
import { NetworkError, OutcomeUnknownError, type ServiceClient, ServiceError } from "../client/index.js";
import { ReelError } from "../errors.js";
import { READ_CHUNK, StreamTally } from "../file-hash.js";
import type { AssetRef, SpeechRef } from "../manifest/index.js";
import { type FileStamp, isLinkRefusal, openNoFollow, sameFile, stampOf } from "../manifest/media-file.js";
import type { Id } from "../service/api-types.js";
import {
  ACCEPTED_FORMATS_TEXT,
  kindOf,
  kindWords,
  MEDIA_FORMATS,
  SNIFF_BYTES,
  sniffFormat,
} from "../service/media-format.js";
import { BudgetReachedError, ClaimLostError, type JobStore } from "../state/job-store.js";
import { type ProgressSink, silentProgress } from "./progress.js";
import { isPrivateAddress, makeSourceAgent, PrivateSourceError } from "./source-address.js";
import { makeStoppableSleep } from "./stoppable-sleep.js";

export class SpeechUncertainError extends ReelError {
  constructor(voiceId: string, text: string) {
    super(
      "E_SPEECH_UNCERTAIN",
      `speech for voice ${voiceId} ("${text.slice(0, 40)}") may have been created already, but no answer was recorded; rerun with --resubmit-uncertain to create it again`,
    );
  }
}

/**
 * A file changed between its check and its upload (replaced by a link or another file, edited):
 * nothing of it reached the service, and the next run checks it again.
 */
export class SourceChangedError extends ReelError {
  constructor(source: string, what: string) {
    super("E_SOURCE_CHANGED", `${source} ${what} after reel checked it, so it was not uploaded`);
  }
}

/** A file to upload, and what it was judged to be when checked. */
interface CheckedFile {
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

export interface AssetResolver {
  /**
   * `reservation`: a capped run's hold of the job asking, which pays for speech made for it. `job`:
   * its key, which the progress events of an upload or speech it starts name.
   */
  resolve(ref: AssetRef | SpeechRef, reservation?: Reservation, job?: string): Promise<Id>;
  /**
   * The id reel has on record for `ref` (a file or address it uploaded, speech it made), as a
   * submission would use it now; undefined for an `{asset: N}` of the manifest, or none yet.
   */
  knownId(ref: AssetRef | SpeechRef): Promise<Id | undefined>;
  /** Forget an asset id the service lost, so the next resolve uploads again. */
  forget(assetId: Id): Promise<void>;
}

/** How progress events name a speech call (`asset`). */
export function speechAsset(voiceId: string, text: string): string {
  return `speech:${voiceId}:${text}`;
}

export function makeAssetResolver(options: AssetResolverOptions): AssetResolver {
  const { client, store, queue, signal } = options;
  const progress = options.progress ?? silentProgress;
  const inFlight = new Map<string, Promise<Id>>();

  /**
   * The critical section of each content, speech and address: the store is read, and what follows
   * from it written, by one task at a time per key. The store is asynchronous, so another task could
   * otherwise read the same "not uploaded yet" between this one's read and its write, and pay for
   * the same speech (or upload the same file) twice. The key is released only once the result is
   * recorded (`recordAsset`, `markSpeechDone` awaited inside `work`): a later caller reads it.
   * Across processes, the intents (markUploading, markSpeechCreating) are compare-and-set.
   */
  function once(key: string, work: () => Promise<Id>): Promise<Id> {
    let promise = inFlight.get(key);
    if (!promise) {
      promise = work().finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
    }
    return promise;
  }

  const sleep = makeStoppableSleep(signal);

  /**
   * In a fleet, another runner is uploading this content or making this speech (its intent won):
   * this one waits for its answer rather than pay twice, taking over the work of runners gone
   * silent meanwhile (their intents are then dropped, or their speech uncertain).
   */
  async function waitForOtherRunner(turn: number): Promise<void> {
    await sleep(backoffDelay(BACKOFF.otherRunner, turn));
    if (signal.aborted) throw signal.reason;
    await store.fleet!.takeOverLost();
  }

  /** Whether `error` is another runner's intent winning (waited for in a fleet; else an error). */
  const otherRunnerWon = (error: unknown): boolean =>
    store.fleet !== undefined && error instanceof ClaimLostError;

  async function uploadFile(file: CheckedFile, job: string | undefined): Promise<Id> {
    const { sha256 } = file;
    return once(`sha:${sha256}`, async () => {
      for (let turn = 0; ; turn++) {
        const known = await store.findAsset(sha256);
        if (known) return known;
        try {
          return await uploadNew(file, job);
        } catch (error) {
          if (!otherRunnerWon(error)) throw error;
        }
        await waitForOtherRunner(turn);
      }
    });
  }

  /** Uploads content the store has no asset for (the caller holds its key: see `once`). */
  async function uploadNew(file: CheckedFile, job: string | undefined): Promise<Id> {
    const { sha256 } = file;
    const result = await queue.add(async () => {
      // Opened here, in the queue: file descriptors are bounded by the uploads at once.
      const handle = await openChecked(file);
      try {
        // The intent makes an upload cut off by a crash visible: the service may have stored it, and
        // with no way to look an asset up by content, the next run can only upload it again.
        // A shared store refuses it for content another runner recorded since the caller looked.
        await store.markUploading(sha256);
        progress.event({ stage: "uploading", asset: sha256, detail: file.named, bytes: file.size, key: job });
        const sent = (bytes: number): void => progress.event({ stage: "upload-bytes", asset: sha256, bytes });
        try {
          return await client.uploadAsset(
            {
              filename: basename(file.path),
              size: file.size,
              read: () => readVerified(handle, file, sent),
            },
            { signal },
          );
        } catch (error) {
          progress.event({ stage: "upload-ended", asset: sha256 });
          // Refused for certain (a 4xx, never sent, or cut before its end because the file changed):
          // nothing was stored on the service, so the next run has no lost upload to report.
          // In a fleet, any failure: while its intent stays, the other runners wait for this upload.
          if (refusedForCertain(error) || store.fleet) await store.forgetUploadIntent(sha256);
          throw error;
        }
      } finally {
        await handle.close();
      }
    });
    await store.recordAsset(sha256, result.id, file.size);
    options.onUpload?.(file.named, sha256);
    return result.id;
  }

  /** Fetches `url` into the cache, once; content that is not of its `use` is refused, not cached. */
  async function fetchRemote(
    url: string,
    use: "image" | "audio",
  ): Promise<{ path: string; sha256: string; size: number }> {
    const cached = await store.findRemote(url);
    if (cached) {
      try {
        if ((await stat(cached.path)).size === cached.size) return { ...cached, size: cached.size };
      } catch {
        // cache file gone: fetch again
      }
    }
    await mkdir(options.cacheDir, { recursive: true });
    const temp = join(options.cacheDir, `.fetch-${randomBytes(6).toString("hex")}`);
    const limit = options.maxRemoteBytes ?? 512 * 1024 ** 2;
    // The first bytes are judged as they came: the cached file is not read back to judge it.
    const tally = new StreamTally(SNIFF_BYTES);
    const allowPrivate = options.allowPrivateSources ?? false;
    // A host written as an address is connected to without a lookup: checked here. Names are checked
    // in the lookup of the connection itself (makeSourceAgent).
    if (!allowPrivate && isPrivateAddress(new URL(url).hostname)) throw new PrivateSourceError(url);
    const dispatcher = makeSourceAgent(url, allowPrivate);
    try {
      // undici's request follows no redirects: a source must be served where the manifest says.
      const response = await request(url, { method: "GET", signal, dispatcher });
      if (response.statusCode !== 200) {
        await response.body.dump();
        const location = response.headers.location;
        const moved =
          response.statusCode >= 300 && response.statusCode < 400
            ? `; reel does not follow redirects for sources: give the final address${typeof location === "string" ? ` (${location})` : ""}`
            : "";
        throw new ReelError("E_REMOTE_SOURCE", `could not fetch ${url}: HTTP ${response.statusCode}${moved}`);
      }
      const meter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          if (tally.size + chunk.length > limit)
            return done(new ReelError("E_REMOTE_SOURCE", `${url} is larger than ${limit} bytes`));
          tally.add(chunk);
          done(null, chunk);
        },
      });
      await pipeline(response.body, meter, createWriteStream(temp, { flags: "wx" }));
      checkFetched(url, tally.head, use);
    } catch (error) {
      await unlink(temp).catch(() => {});
      if (error instanceof ReelError || signal.aborted) throw error;
      throw new ReelError("E_REMOTE_SOURCE", `could not fetch ${url}: ${(error as Error).message}`, {
        cause: error,
      });
    } finally {
      await dispatcher.close().catch(() => {});
    }
    const sha256 = tally.sha256();
    const size = tally.size;
    const path = join(options.cacheDir, sha256);
    await rename(temp, path);
    await store.recordRemote(url, sha256, path, size);
    return { path, sha256, size };
  }

  async function makeSpeech(
    ref: SpeechRef,
    reservation: Reservation | undefined,
    job: string | undefined,
  ): Promise<Id> {
    return once(`speech:${ref.voiceId}:${ref.text}`, async () => {
      for (let turn = 0; ; turn++) {
        const row = await store.findSpeech(ref.voiceId, ref.text);
        if (row?.state === "done" && row.asset_id) return row.asset_id;
        // Another runner's speech call under way (a gone runner's becomes uncertain meanwhile).
        if (row?.state === "creating" && store.fleet) {
          await waitForOtherRunner(turn);
          continue;
        }
        if ((row?.state === "uncertain" || row?.state === "creating") && !options.resubmitUncertain) {
          throw new SpeechUncertainError(ref.voiceId, ref.text);
        }
        try {
          return await speakNew(ref, reservation, job);
        } catch (error) {
          if (!otherRunnerWon(error)) throw error;
        }
        await waitForOtherRunner(turn);
      }
    });
  }

  /** Makes speech the store has none of (the caller holds its key: see `once`). */
  async function speakNew(
    ref: SpeechRef,
    reservation: Reservation | undefined,
    job: string | undefined,
  ): Promise<Id> {
    const asset = speechAsset(ref.voiceId, ref.text);
    return queue.add(async () => {
      if (signal.aborted) throw signal.reason;
      // A capped run counts the call first: past the cap, it is not made (see src/budget).
      const { budget } = options;
      const cost = budget?.speechCost();
      if (
        budget &&
        !reservation?.payFromHold(cost!) &&
        !budget.takeForAdmitted(`the speech of voice ${ref.voiceId}`, cost!)
      )
        throw new BudgetStoppedError(budget.stopped!);
      /** The call was not made after all: its count given back. */
      const refund = async (): Promise<void> => {
        if (!budget) return;
        budget.giveBack(cost!);
        await store.refundSpeech(budget.session.id, ref.voiceId, ref.text);
      };
      try {
        await store.markSpeechCreating(ref.voiceId, ref.text, budget?.speechCharge());
      } catch (error) {
        budget?.giveBack(cost!); // no intent, so no charge was written
        // The named budget had no room for the call: the budget stops as at its own cap.
        if (budget && error instanceof BudgetReachedError) {
          budget.reachedShared(`the speech of voice ${ref.voiceId}`, error);
          throw new BudgetStoppedError(budget.stopped!);
        }
        throw error;
      }
      progress.event({ stage: "speaking", asset, detail: `voice ${ref.voiceId}`, key: job });
      if (signal.aborted) {
        // Stopped while the intent reached the disk: nothing was sent, take the intent back.
        await store.clearSpeech(ref.voiceId, ref.text);
        await refund();
        throw signal.reason;
      }
      try {
        const audio = await client.createSpeech(
          { voiceId: ref.voiceId, text: ref.text },
          { signal: options.costedSignal },
        );
        await store.markSpeechDone(ref.voiceId, ref.text, audio.id, audio.duration);
        options.onSpeech?.(ref.voiceId, ref.text);
        return audio.id;
      } catch (error) {
        progress.event({ stage: "speech-ended", asset });
        if (error instanceof OutcomeUnknownError)
          await store.markSpeechUncertain(ref.voiceId, ref.text, error.message);
        // A definite refusal (a 401 that stopped the run, say) created nothing, stopped or not:
        // left as "creating", the next run would take it for a speech perhaps paid for.
        else if (!signal.aborted || refusedForCertain(error)) {
          await store.clearSpeech(ref.voiceId, ref.text);
          await refund();
        }
        throw error;
      }
    });
  }

  return {
    async resolve(ref, reservation, job) {
      switch (ref.kind) {
        case "asset":
          return ref.id;
        case "file":
          return uploadFile({ ...ref, source: ref.path, named: ref.path }, job);
        case "url": {
          const fetched = await once(`url:${ref.url}`, async () => {
            const remote = await fetchRemote(ref.url, ref.use);
            // Uploaded from the cache, checked against the hash of the bytes fetched and judged.
            return uploadFile(
              {
                ...remote,
                source: `the copy of ${ref.url} kept in ${remote.path}`,
                named: ref.url,
              },
              job,
            );
          });
          return fetched;
        }
        case "speech":
          return makeSpeech(ref, reservation, job);
      }
    },
    async knownId(ref) {
      switch (ref.kind) {
        case "asset":
          return undefined;
        case "file":
          return store.findAsset(ref.sha256);
        case "url": {
          const fetched = await store.findRemote(ref.url);
          return fetched && store.findAsset(fetched.sha256);
        }
        case "speech": {
          const row = await store.findSpeech(ref.voiceId, ref.text);
          return row?.state === "done" ? (row.asset_id ?? undefined) : undefined;
        }
      }
    },
    forget(assetId) {
      return store.forgetAssetId(assetId);
    },
  };
}

/**
 * Opens the file to upload without following a link, and makes sure it is the file that was checked
 * (same device and inode, size and modification time): a file swapped since is not read at all.
 */
async function openChecked(file: CheckedFile): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await openNoFollow(file.path);
  } catch (error) {
    if (isLinkRefusal(error)) throw new SourceChangedError(file.source, "was replaced by a link");
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new SourceChangedError(file.source, "was removed");
    throw error;
  }
  try {
    const info = await handle.stat({ bigint: true });
    const now = stampOf(info);
    if (!info.isFile() || (file.stamp && (now.dev !== file.stamp.dev || now.ino !== file.stamp.ino))) {
      throw new SourceChangedError(file.source, "was replaced by another file");
    }
    if (now.size !== file.size || (file.stamp && !sameFile(now, file.stamp))) {
      throw new SourceChangedError(file.source, "was edited");
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The file's bytes from the open descriptor, hashed on the way. The last chunk is held back until
 * the whole file has been hashed: bytes that differ from what was checked (the file edited in place
 * during the upload) end the upload before its end, so the service stores nothing, and the hash the
 * state file keeps always names the content that was uploaded.
 */
async function* readVerified(
  handle: FileHandle,
  file: CheckedFile,
  sent: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  const hash = createHash("sha256");
  let held: Buffer | undefined;
  let position = 0;
  while (position < file.size) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK, file.size - position));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    hash.update(chunk.subarray(0, bytesRead));
    position += bytesRead;
    if (held) {
      yield held;
      sent(position - bytesRead); // everything up to this chunk was taken by the request
    }
    held = chunk.subarray(0, bytesRead);
  }
  const { bytesRead: beyond } = await handle.read(Buffer.alloc(1), 0, 1, position);
  if (position !== file.size || beyond > 0 || hash.digest("hex") !== file.sha256) {
    throw new SourceChangedError(file.source, "changed while it was being uploaded");
  }
  if (held) yield held;
}

function refusedForCertain(error: unknown): boolean {
  if (error instanceof SourceChangedError) return true;
  if (error instanceof NetworkError) return !error.sent;
  return (
    error instanceof ServiceError && error.status !== undefined && error.status >= 400 && error.status < 500
  );
}

/**
 * A fetched source is judged by its bytes, as a local file is by `validate`: an MP3 given as the
 * source image, or an HTML error page served with 200, would otherwise be uploaded and cost a
 * submission that can only fail.
 */
function checkFetched(url: string, head: Buffer, use: "image" | "audio"): void {
  const format = sniffFormat(head);
  if (format !== undefined && kindOf(format) === use) return;
  const found =
    format === undefined ? "none of the accepted formats (an error page?)" : MEDIA_FORMATS[format].words;
  throw new ReelError(
    "E_REMOTE_SOURCE",
    `${url} is not ${kindWords(use)}: its content is ${found}; accepted: ${ACCEPTED_FORMATS_TEXT}`,
  );
}
