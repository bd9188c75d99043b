// A file of OUT, with Range support: a browser's player asks for byte ranges of a video.
import { createReadStream, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname } from "node:path";

const TYPES: Readonly<Record<string, string>> = {
  ".mp4": "video/mp4",
  ".json": "application/json",
  ".jsonl": "application/x-ndjson",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".html": "text/plain; charset=utf-8", // shown as text: a page of OUT runs no script on this origin
};

export function sendFile(req: IncomingMessage, res: ServerResponse, path: string): void {
  const size = statSync(path).size;
  const type = TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
  let start = 0;
  let end = size - 1;
  if (range && (range[1] !== "" || range[2] !== "")) {
    start = range[1] === "" ? Math.max(0, size - Number(range[2])) : Number(range[1]);
    end = range[1] !== "" && range[2] !== "" ? Math.min(Number(range[2]), size - 1) : size - 1;
    if (start > end || start >= size) {
      res.writeHead(416, { "content-range": `bytes */${size}` }).end();
      return;
    }
  }
  const headers = {
    "content-type": type,
    "accept-ranges": "bytes",
    "content-length": String(end - start + 1),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  };
  if (range) res.writeHead(206, { ...headers, "content-range": `bytes ${start}-${end}/${size}` });
  else res.writeHead(200, headers);
  if (req.method === "HEAD" || size === 0) {
    res.end();
    return;
  }
  createReadStream(path, { start, end }).pipe(res);
}
