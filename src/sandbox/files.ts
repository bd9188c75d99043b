// Serves asset files and result videos like a CDN: no auth (the address is the secret), byte
// ranges so clients can resume a download, a strong ETag so they resume the same file. The
// truncation fault lives here because a download cut short is a network failure, not an API one.

import { once } from "node:events";
import { createReadStream } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { MEDIA_FORMATS } from "../service-contract/media-format.js";
import type { ServedFile } from "./assets.js";

type ByteRange = { readonly start: number; readonly end: number } | "unsatisfiable" | undefined;

/**
 * A single `bytes=` range of RFC 9110. Several ranges, or a syntax we do not know, fall back to the
 * whole file (which the RFC allows); a range past the end is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, from = "", to = ""] = match;
  if (from === "" && to === "") return undefined;
  if (from === "") {
    const suffix = Number(to);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const end = to === "" ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/**
 * Writes `file` to `res`. With `truncate`, sends the headers of the full answer, then about half of
 * the bytes, then ends the connection: what a client sees when a download breaks midway.
 * Returns the status sent, or "drop" when cut short.
 */
export async function serveFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: ServedFile,
  truncate: boolean,
): Promise<number | "drop"> {
  const ifRange = req.headers["if-range"];
  // If-Range names the version the client holds; another version means "send it all again".
  const range =
    ifRange === undefined || ifRange === file.etag ? parseRange(req.headers.range, file.size) : undefined;
  const common = {
    "content-type": MEDIA_FORMATS[file.format].contentType,
    "accept-ranges": "bytes",
    etag: file.etag,
    "cache-control": "private, max-age=3600",
  };
  if (range === "unsatisfiable") {
    res.writeHead(416, { ...common, "content-range": `bytes */${file.size}`, "content-length": "0" });
    res.end();
    return 416;
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? file.size - 1;
  const length = end - start + 1;
  const status = range ? 206 : 200;
  res.writeHead(status, {
    ...common,
    "content-length": String(length),
    ...(range ? { "content-range": `bytes ${start}-${end}/${file.size}` } : {}),
  });
  if (req.method === "HEAD" || length <= 0) {
    res.end();
    return status;
  }
  if (!truncate) {
    // A client that hangs up mid-download is its own business: the status was sent all the same.
    await pipeline(createReadStream(file.path, { start, end }), res).catch(() => undefined);
    return status;
  }
  const cut = start + Math.max(1, Math.floor(length / 2)) - 1;
  for await (const chunk of createReadStream(file.path, { start, end: cut })) {
    if (res.destroyed) return "drop";
    if (!res.write(chunk)) await Promise.race([once(res, "drain"), once(res, "close")]);
  }
  // end() flushes what was written, then closes: the client has its headers and half the body.
  res.socket?.end();
  return "drop";
}
