// The video a successful task returns: of the width and height its request asks for
// (resolution and aspect ratio: 1080p at 9:16 is 1080x1920) and as long as its chunks. Made from
// committed one-frame H.264 clips, one per shape (assets/sandbox/README.md says how, with Debian's
// ffmpeg; there is no ffmpeg at run time), whose one frame is given the task's duration in the MP4's
// sample table (mp4-boxes.ts): a few kilobytes, whatever the length. Each shape and length is made
// once per data folder, under `results/`, and served from there.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AspectRatio, Resolution } from "../service-contract/api-types.js";
import { withDuration } from "./mp4-boxes.js";

/** A file the sandbox serves as a task's result. */
export interface ResultVideo {
  readonly path: string;
  readonly size: number;
  readonly etag: string;
  /** Its name in the data folder's `results/`, as a persistent sandbox records it. */
  readonly fileName: string;
}

/** The committed clips (from src/sandbox/ for tests and from dist/sandbox/ for the CLI alike). */
export const CLIPS_DIR = fileURLToPath(new URL("../../assets/sandbox/", import.meta.url));

/**
 * The video result the tasks of an older reel's sandbox all shared: a persistent sandbox's older records
 * still point at it.
 */
export const RESULT_VIDEO_PATH = join(CLIPS_DIR, "result.mp4");

/** Lines of the short side per resolution. */
const LINES: Record<Resolution, number> = { "540p": 540, "720p": 720, "1080p": 1080 };

/** Width and height of a video of `resolution` at `aspectRatio`: the resolution is the short side. */
export function frameSize(
  resolution: Resolution,
  aspectRatio: AspectRatio,
): { width: number; height: number } {
  const short = LINES[resolution];
  const long = Math.round((short * 16) / 9 / 2) * 2;
  if (aspectRatio === "16:9") return { width: long, height: short };
  if (aspectRatio === "9:16") return { width: short, height: long };
  return { width: short, height: short };
}

/** The committed one-frame clip of a shape. */
export function clipPath(width: number, height: number): string {
  return join(CLIPS_DIR, `frame-${width}x${height}.mp4`);
}

/** The bytes of the video of `width` x `height` lasting `seconds`: what the sandbox serves. */
export function resultVideoBytes(width: number, height: number, seconds: number): Buffer {
  return withDuration(readFileSync(clipPath(width, height)), seconds);
}

/** The result all tasks of an older reel's sandbox shared, for their records a persistent sandbox restores. */
export function legacyResultVideo(): ResultVideo {
  legacy ??= fileVideo(RESULT_VIDEO_PATH, "result.mp4");
  return legacy;
}

let legacy: ResultVideo | undefined;

function fileVideo(path: string, fileName: string, bytes: Buffer = readFileSync(path)): ResultVideo {
  return {
    path,
    size: bytes.length,
    etag: createHash("sha256").update(bytes).digest("hex").slice(0, 32),
    fileName,
  };
}

/**
 * Makes and keeps the result videos of one sandbox, in `dir` (its data folder's `results/`): each
 * shape and length read (or made) once, however many tasks return it.
 */
export class ResultVideos {
  private readonly made = new Map<string, ResultVideo>();

  constructor(private readonly dir: string) {}

  /** The video of a task of this shape and length, made now if it was not yet. */
  videoFor(plan: { resolution: Resolution; aspectRatio: AspectRatio; seconds: number }): ResultVideo {
    const { width, height } = frameSize(plan.resolution, plan.aspectRatio);
    const fileName = `${width}x${height}-${plan.seconds}s.mp4`;
    const kept = this.byName(fileName);
    if (kept) return kept;
    // Written whole, then renamed: a sandbox killed meanwhile leaves no half video under its name.
    const path = join(this.dir, fileName);
    const bytes = resultVideoBytes(width, height, plan.seconds);
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(`${path}.tmp`, bytes);
    renameSync(`${path}.tmp`, path);
    const video = fileVideo(path, fileName, bytes);
    this.made.set(fileName, video);
    return video;
  }

  /** A video made earlier (by this start, or an earlier start of a persistent sandbox), by file name. */
  byName(fileName: string): ResultVideo | undefined {
    let video = this.made.get(fileName);
    if (!video) {
      const path = join(this.dir, fileName);
      if (statSync(path, { throwIfNoEntry: false }) === undefined) return undefined;
      video = fileVideo(path, fileName);
      this.made.set(fileName, video);
    }
    return video;
  }
}
