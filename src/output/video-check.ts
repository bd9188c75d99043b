// Whether a video reel saved is still the one it saved, checked at every rerun for every video done.
// Cheap first: the size always (one stat), the content only when the file's stamp changed since it
// was written, so a rerun over 10,000 untouched videos reads none of them.
import { type BigIntStats, statSync } from "node:fs";
import { sha256File } from "../sha256.js";
import type { JobRow } from "../state/job-store.js";
import { isCompleteVideo } from "./download.js";

/**
 * - "same": the video reel saved; `stamp` is set when its content was read again to tell (the
 *   stamp changed, the bytes did not: `touch`, a copy back in place), to be recorded.
 * - "changed": a file is there, but not that video (cut short, edited, replaced): never overwritten.
 * - "missing": nothing usable there (deleted, or not a file).
 */
export type VideoCheck =
  { readonly kind: "same"; readonly stamp?: string } | { readonly kind: "changed" | "missing" };

/** What changes whenever a file's content may have: mtime, ctime (any write, `cp -p` too) and inode. */
export function stampOf(info: BigIntStats): string {
  return `${info.mtimeNs}:${info.ctimeNs}:${info.ino}`;
}

/** The stamp of the file at `path`, which exists. */
export function stampOfPath(path: string): string {
  return stampOf(statSync(path, { bigint: true }));
}

/** Checks the video of `row` at `path` against what was recorded when it was written. */
export async function checkSavedVideo(
  path: string,
  row: Pick<JobRow, "file_size" | "file_sha256" | "file_stamp">,
): Promise<VideoCheck> {
  let info: BigIntStats;
  try {
    // Synchronous: one quick call, made for every video done (see isCompleteVideo).
    info = statSync(path, { bigint: true });
  } catch {
    return { kind: "missing" };
  }
  // An empty file holds nothing to keep (what a power cut leaves of a file being written).
  if (!info.isFile() || info.size === 0n) return { kind: "missing" };
  if (row.file_size === null || row.file_sha256 === null) {
    // Saved by an earlier reel, which recorded neither: its first bytes are all there is to check.
    return isCompleteVideo(path) ? { kind: "same" } : { kind: "changed" };
  }
  if (Number(info.size) !== row.file_size) return { kind: "changed" };
  const stamp = stampOf(info);
  if (stamp === row.file_stamp) return { kind: "same" };
  return (await sha256File(path)) === row.file_sha256 ? { kind: "same", stamp } : { kind: "changed" };
}
