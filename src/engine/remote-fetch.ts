// Remote sources (https addresses in a manifest): fetched once into the cache, never through a
// redirect, never from a private address unless allowed, bounded in size, and judged by their
// bytes before they are kept.
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { request } from "../undici-parts.js";
import { ReelError } from "../errors/reel-error.js";
import { StreamTally } from "../sha256.js";
import {
  ACCEPTED_FORMATS_TEXT,
  kindOf,
  kindWords,
  MEDIA_FORMATS,
  SNIFF_BYTES,
  sniffFormat,
} from "../service-contract/media-format.js";
import type { AssetContext } from "./asset-context.js";
import { isPrivateAddress, makeSourceAgent } from "./source-address.js";
import { PrivateSourceError } from "../errors/engine.js";

/** Fetches `url` into the cache, once; content that is not of its `use` is refused, not cached. */
export async function fetchRemote(
  ac: AssetContext,
  url: string,
  use: "image" | "audio",
): Promise<{ path: string; sha256: string; size: number }> {
  const { store, signal, options } = ac;
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
