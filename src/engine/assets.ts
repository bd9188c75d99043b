// Turns the asset references of job specs into service asset ids: each distinct file content is
// uploaded once per service (across names, manifests and runs, keyed by sha256 in the state file),
// each remote source fetched once, each (voice, text) made into speech once. Concurrent requests for
// the same content share one in-flight promise.
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type PQueue from "p-queue";
import { request } from "undici";
import { NetworkError, OutcomeUnknownError, type ServiceClient, ServiceError } from "../client/index.js";
import { ReelError } from "../errors.js";
import type { AssetRef, SpeechRef } from "../manifest/index.js";
import type { Id } from "../service/api-types.js";
import { ACCEPTED_FORMATS_TEXT, MEDIA_KIND, SNIFF_BYTES, sniffFormat } from "../service/media-format.js";
import type { StateStore } from "../state/store.js";

export class SpeechUncertainError extends ReelError {
  constructor(voiceId: string, text: string) {
    super(
      "E_SPEECH_UNCERTAIN",
      `speech for voice ${voiceId} ("${text.slice(0, 40)}") may have been created already, but no answer was recorded; rerun with --resubmit-uncertain to create it again`,
    );
  }
}

export interface AssetResolverOptions {
  readonly client: ServiceClient;
  readonly store: StateStore;
  /** Bounds concurrent uploads and speech calls. */
  readonly queue: PQueue;
  /** Where remote sources are kept once fetched. */
  readonly cacheDir: string;
  readonly resubmitUncertain: boolean;
  readonly signal: AbortSignal;
  /**
   * Aborts a costed call (speech) already on the wire: later than `signal`, so an answer on its
   * way is still recorded; an abort then leaves the speech uncertain, never resent blindly.
   */
  readonly costedSignal: AbortSignal;
  /** @defaultValue 512 MiB */
  readonly maxRemoteBytes?: number;
  /** `source`: the file's path, or the address it was fetched from. */
  readonly onUpload?: (source: string, sha256: string) => void;
  readonly onSpeech?: (voiceId: string, text: string) => void;
}

export interface AssetResolver {
  resolve(ref: AssetRef | SpeechRef): Promise<Id>;
  /**
   * The id reel has on record for `ref` (a file or address it uploaded, speech it made), as a
   * submission would use it now; undefined for an `{asset: N}` of the manifest, or none yet.
   */
  knownId(ref: AssetRef | SpeechRef): Id | undefined;
  /** Forget an asset id the service lost, so the next resolve uploads again. */
  forget(assetId: Id): void;
}

export function makeAssetResolver(options: AssetResolverOptions): AssetResolver {
  const { client, store, queue, signal } = options;
  const inFlight = new Map<string, Promise<Id>>();

  function once(key: string, work: () => Promise<Id>): Promise<Id> {
    let promise = inFlight.get(key);
    if (!promise) {
      promise = work().finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
    }
    return promise;
  }

  /** `source`: what the user named (a path, or the address of a fetched file), for the progress line. */
  async function uploadFile(path: string, sha256: string, source = path): Promise<Id> {
    return once(`sha:${sha256}`, async () => {
      const known = store.findAsset(sha256);
      if (known) return known;
      const size = (await stat(path)).size;
      const result = await queue.add(async () => {
        // The intent makes an upload cut off by a crash visible: the service may have stored it, and
        // with no way to look an asset up by content, the next run can only upload it again.
        store.markUploading(sha256);
        try {
          return await client.uploadAsset(path, { signal });
        } catch (error) {
          // Refused for certain (a 4xx, or never sent): nothing was stored on the service, so the
          // next run has no lost upload to report.
          if (refusedForCertain(error)) store.forgetUploadIntent(sha256);
          throw error;
        }
      });
      store.recordAsset(sha256, result.id, size);
      options.onUpload?.(source, sha256);
      return result.id;
    });
  }

  /** Fetches `url` into the cache, once; content that is not of its `use` is refused, not cached. */
  async function fetchRemote(url: string, use: "image" | "audio"): Promise<{ path: string; sha256: string }> {
    const cached = store.findRemote(url);
    if (cached) {
      try {
        if ((await stat(cached.path)).size === cached.size) return cached;
      } catch {
        // cache file gone: fetch again
      }
    }
    await mkdir(options.cacheDir, { recursive: true });
    const temp = join(options.cacheDir, `.fetch-${randomBytes(6).toString("hex")}`);
    const limit = options.maxRemoteBytes ?? 512 * 1024 ** 2;
    const hash = createHash("sha256");
    let size = 0;
    try {
      // undici's request follows no redirects: a source must be served where the manifest says.
      const response = await request(url, { method: "GET", signal });
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
          size += chunk.length;
          if (size > limit)
            return done(new ReelError("E_REMOTE_SOURCE", `${url} is larger than ${limit} bytes`));
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(response.body, meter, createWriteStream(temp, { flags: "wx" }));
      await checkFetched(url, temp, use);
    } catch (error) {
      await unlink(temp).catch(() => {});
      if (error instanceof ReelError || signal.aborted) throw error;
      throw new ReelError("E_REMOTE_SOURCE", `could not fetch ${url}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const sha256 = hash.digest("hex");
    const path = join(options.cacheDir, sha256);
    await rename(temp, path);
    store.recordRemote(url, sha256, path, size);
    return { path, sha256 };
  }

  async function makeSpeech(ref: SpeechRef): Promise<Id> {
    return once(`speech:${ref.voiceId}:${ref.text}`, async () => {
      const row = store.findSpeech(ref.voiceId, ref.text);
      if (row?.state === "done" && row.asset_id) return row.asset_id;
      if ((row?.state === "uncertain" || row?.state === "creating") && !options.resubmitUncertain) {
        throw new SpeechUncertainError(ref.voiceId, ref.text);
      }
      return queue.add(async () => {
        if (signal.aborted) throw signal.reason;
        await store.markSpeechCreating(ref.voiceId, ref.text);
        if (signal.aborted) {
          // Stopped while the intent reached the disk: nothing was sent, take the intent back.
          store.clearSpeech(ref.voiceId, ref.text);
          throw signal.reason;
        }
        try {
          const audio = await client.createSpeech(
            { voiceId: ref.voiceId, text: ref.text },
            { signal: options.costedSignal },
          );
          store.markSpeechDone(ref.voiceId, ref.text, audio.id, audio.duration);
          options.onSpeech?.(ref.voiceId, ref.text);
          return audio.id;
        } catch (error) {
          if (error instanceof OutcomeUnknownError)
            store.markSpeechUncertain(ref.voiceId, ref.text, error.message);
          // A definite refusal (a 401 that stopped the run, say) created nothing, stopped or not:
          // left as "creating", the next run would take it for a speech perhaps paid for.
          else if (!signal.aborted || refusedForCertain(error)) store.clearSpeech(ref.voiceId, ref.text);
          throw error;
        }
      });
    });
  }

  return {
    async resolve(ref) {
      switch (ref.kind) {
        case "asset":
          return ref.id;
        case "file":
          return uploadFile(ref.path, ref.sha256);
        case "url": {
          const fetched = await once(`url:${ref.url}`, async () => {
            const remote = await fetchRemote(ref.url, ref.use);
            return uploadFile(remote.path, remote.sha256, ref.url);
          });
          return fetched;
        }
        case "speech":
          return makeSpeech(ref);
      }
    },
    knownId(ref) {
      switch (ref.kind) {
        case "asset":
          return undefined;
        case "file":
          return store.findAsset(ref.sha256);
        case "url": {
          const fetched = store.findRemote(ref.url);
          return fetched && store.findAsset(fetched.sha256);
        }
        case "speech": {
          const row = store.findSpeech(ref.voiceId, ref.text);
          return row?.state === "done" ? (row.asset_id ?? undefined) : undefined;
        }
      }
    },
    forget(assetId) {
      store.forgetAssetId(assetId);
    },
  };
}

function refusedForCertain(error: unknown): boolean {
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
async function checkFetched(url: string, path: string, use: "image" | "audio"): Promise<void> {
  const handle = await open(path, "r");
  let head: Buffer;
  try {
    ({ buffer: head } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0));
  } finally {
    await handle.close();
  }
  const format = sniffFormat(head);
  if (format !== undefined && MEDIA_KIND[format] === use) return;
  const found =
    format === undefined
      ? "none of the accepted formats (an error page?)"
      : `${format.toUpperCase()} ${MEDIA_KIND[format]}`;
  throw new ReelError(
    "E_REMOTE_SOURCE",
    `${url} is not ${use === "image" ? "an image" : "audio"}: its content is ${found}; accepted: ${ACCEPTED_FORMATS_TEXT}`,
  );
}
