// Locates the committed MP4 that every successful task returns. It is a real H.264 file made once
// with ffmpeg (see assets/sandbox/README.md) because ffmpeg is not there at run time; the relative
// URL works from src/sandbox/ (tests) and from dist/sandbox/ (the built CLI) alike.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** The committed MP4 every successful task returns. */
export interface ResultVideo {
  readonly path: string;
  readonly size: number;
  readonly etag: string;
}

export const RESULT_VIDEO_PATH = fileURLToPath(new URL("../../assets/sandbox/result.mp4", import.meta.url));

let cached: Promise<ResultVideo> | undefined;

/** Reads the fixture once per process (a few kilobytes) to size it and derive its ETag. */
export function loadResultVideo(): Promise<ResultVideo> {
  cached ??= readFile(RESULT_VIDEO_PATH).then((bytes) => ({
    path: RESULT_VIDEO_PATH,
    size: bytes.length,
    etag: createHash("sha256").update(bytes).digest("hex").slice(0, 32),
  }));
  return cached;
}
