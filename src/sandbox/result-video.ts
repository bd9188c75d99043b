// Locates the committed MP4 that every successful task returns. It is a real H.264 file made once
// with ffmpeg (see assets/sandbox/README.md) because ffmpeg is not there at run time; the relative
// URL works from src/sandbox/ (tests) and from dist/sandbox/ (the built CLI) alike.
import { stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { sha256File } from "../file-hash.js";

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
  cached ??= Promise.all([stat(RESULT_VIDEO_PATH), sha256File(RESULT_VIDEO_PATH)]).then(([info, sha]) => ({
    path: RESULT_VIDEO_PATH,
    size: info.size,
    etag: sha.slice(0, 32),
  }));
  return cached;
}
