// What `reel clean` removes (docs/review.md, "Cleaning up"): the videos of rejected takes and of old
// versions, and only files reel wrote and that are still what it wrote. Everything else stays: an
// approved or undecided current take, an approved old version, every record, the store's rows, and
// any file the store does not record, or records with other content than is there now.
import { lstat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { isOwnVideoFile, videoFile } from "../output/layout.js";
import type { OutFolder } from "../output/out-folder.js";
import { checkSavedVideo } from "../output/video-check.js";
import { type DecisionRow, decisionsByVersion, type JobRow, versionKey } from "../state/job-store.js";

/** Why a video may go: its take was rejected, or it is a version no longer its job's current one. */
export type CleanReason = "rejected" | "old version";

export interface CleanCandidate {
  readonly row: JobRow;
  /** Relative to OUT, as the store records it. */
  readonly file: string;
  readonly why: CleanReason;
  /** The latest decision on it, if any (who rejected it, and why). */
  readonly decision: DecisionRow | undefined;
}

export interface Removable extends CleanCandidate {
  readonly bytes: number;
}

export interface LeftFile {
  readonly row: JobRow;
  readonly file: string;
  readonly why: string;
}

/**
 * The videos that may go, from the store alone: of every version (`rows`) of the service whose
 * video lies in `out`, those of a current take (`current`: its job's current version by key) whose
 * latest decision is rejected, and those of a version that is not its job's current one, unless
 * approved.
 */
export function cleanCandidates(
  rows: readonly JobRow[],
  current: ReadonlyMap<string, JobRow>,
  decisions: readonly DecisionRow[],
  out: OutFolder,
): CleanCandidate[] {
  const latest = decisionsByVersion(decisions);
  const found: CleanCandidate[] = [];
  for (const row of rows) {
    const file = row.file;
    if (row.state !== "Success" || file === null || !out.holds(row.out_dir)) continue;
    // Only a name reel gives this job's videos: a row is no licence to delete elsewhere.
    if (!isOwnVideoFile(row.manifest, row.video_id, file)) continue;
    const decision = latest.get(versionKey(row.job_key, row.spec_hash));
    const isCurrent = current.get(row.job_key)?.id === row.id;
    if (isCurrent) {
      if (decision?.decision === "rejected") found.push({ row, file, why: "rejected", decision });
    } else if (decision?.decision !== "approved" && file !== videoFile(row.manifest, row.video_id)) {
      found.push({ row, file, why: "old version", decision });
    }
  }
  return found.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/**
 * Of `candidates`, those whose file in `outDir` is still the video reel wrote (a regular file of the
 * size and SHA-256 recorded when it was written): `removable`; those whose file is something else:
 * `left`, with why. A file already gone is neither.
 */
export async function checkCandidates(
  outDir: string,
  candidates: readonly CleanCandidate[],
): Promise<{ removable: Removable[]; left: LeftFile[] }> {
  const removable: Removable[] = [];
  const left: LeftFile[] = [];
  for (const candidate of candidates) {
    const { row, file } = candidate;
    const path = join(outDir, file);
    const info = await lstat(path).catch(() => undefined);
    if (info === undefined) continue;
    if (!info.isFile()) {
      left.push({ row, file, why: "not a regular file (a link or a folder): not what reel wrote" });
      continue;
    }
    if (row.file_size === null || row.file_sha256 === null) {
      left.push({
        row,
        file,
        why: "written by an earlier reel that recorded no size and hash to check it by",
      });
      continue;
    }
    const check = await checkSavedVideo(path, row);
    if (check.kind === "same") removable.push({ ...candidate, bytes: info.size });
    else if (check.kind === "changed")
      left.push({ row, file, why: "not the video reel wrote (changed since)" });
  }
  return { removable, left };
}

/** Removes each file; one gone meanwhile counts as removed by someone else, not by this. */
export async function removeFiles(outDir: string, files: readonly Removable[]): Promise<Removable[]> {
  const removed: Removable[] = [];
  for (const item of files) {
    try {
      await unlink(join(outDir, item.file));
      removed.push(item);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return removed;
}
