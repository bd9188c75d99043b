// One video into DIR, whole or not at all: hard-linked when DIR is on the output folder's file system
// (no bytes copied), copied otherwise, always under a temp name first, its content checked against
// the size and SHA-256 the state recorded, then renamed over the final name.
import type { BigIntStats } from "node:fs";
import { copyFile, link, lstat, mkdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ReelError } from "../errors/reel-error.js";
import { sha256File } from "../sha256.js";
import { tempPathFor } from "../output/atomic-write.js";
import { stampOfPath } from "../output/video-check.js";

export interface Placed {
  readonly how: "linked" | "copied";
  readonly stamp: string;
}

/** Creates the folders of `name` under `dir`, refusing any that is not a real folder (a symlink out). */
export async function ensureFoldersIn(dir: string, name: string): Promise<void> {
  const parts = name.split("/").slice(0, -1);
  let at = dir;
  for (const part of parts) {
    at = join(at, part);
    await mkdir(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    const info = await lstat(at);
    if (!info.isDirectory())
      throw new ReelError(
        "E_OUTPUT_PATH",
        `${at} is ${info.isSymbolicLink() ? "a symbolic link" : "not a folder"}; reel export writes only into real folders under DIR. Move it, or choose another --name.`,
      );
  }
}

/**
 * Places `source` at `target`; `sha256`/`size`: what the state recorded of it, `recordedStamp` the
 * stamp it recorded (video-check.ts stampOf: mtime:ctime:inode).
 */
export async function placeVideo(
  source: string,
  target: string,
  sha256: string,
  size: number,
  recordedStamp: string | null,
): Promise<Placed> {
  const temp = tempPathFor(target);
  let how: Placed["how"] = "linked";
  try {
    try {
      await link(source, temp);
    } catch (error) {
      // Another file system (EXDEV), or one without hard links: a copy.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EXDEV" && code !== "EPERM" && code !== "ENOTSUP" && code !== "EMLINK") throw error;
      how = "copied";
      await copyFile(source, temp);
    }
    const placed = await lstat(temp, { bigint: true });
    if (
      Number(placed.size) !== size ||
      (!sameInodeAsRecorded(placed, recordedStamp) && (await sha256File(temp)) !== sha256)
    )
      throw new ReelError(
        "E_SOURCE_CHANGED",
        `${source} changed while it was exported (its size or SHA-256 is no longer what reel recorded); nothing was written under ${target}`,
      );
    await rename(temp, target);
    return { how, stamp: stampOfPath(target) };
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/**
 * Whether a link is to the very file the state recorded, unwritten since: the same inode and mtime
 * (a link changes the ctime of the stamp, not these). Its bytes need not be read again then.
 */
function sameInodeAsRecorded(info: BigIntStats, stamp: string | null): boolean {
  if (stamp === null) return false;
  const [mtime, , ino] = stamp.split(":");
  return `${info.mtimeNs}` === mtime && `${info.ino}` === ino;
}
