// Versions of a video kept side by side. Editing a video's spec makes a new job, and the old result
// stays on disk (the README): the manifest's current version holds `<id>.mp4`, the others
// `<id>.<hash>.mp4`, each with its record beside it. A file found at a video's name that is not the
// video reel saved is moved aside the same way, never written over.
import { lstat, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { JobRow, JobStore } from "../state/job-store.js";
import { writeJobRecord } from "./job-record.js";
import { keptVideoFile, recordOfVideo } from "./layout.js";
import { sha256File } from "../sha256.js";
import type { OutFolder } from "./out-folder.js";

/** The output folder and the state file that records what is in it. */
export interface VersionsContext {
  readonly store: JobStore;
  readonly outDir: string;
  /** `outDir` as the state file names it, and which rows' videos lie in it. */
  readonly out: OutFolder;
}

/** The versions of job `key` whose video is recorded at `file` of this output folder. */
export async function filesHere(
  { store, out }: VersionsContext,
  key: string,
  file: string,
): Promise<JobRow[]> {
  return (await store.listJobsWithFile(key, file)).filter((row) => out.holds(row.out_dir));
}

/**
 * Before `row` takes `file` (`<id>.mp4`), an older version's video there moves to its hash name
 * (see keptName), with its record. The functions here read the store, then move files and record
 * what they did: the engine runs them inside its section of the video (EngineContext.videoLock), so
 * that no other version of it acts on the same read.
 */
export async function keepPreviousVersion(ctx: VersionsContext, row: JobRow, file: string): Promise<void> {
  const { store, outDir, out } = ctx;
  for (const older of await filesHere(ctx, row.job_key, file)) {
    if (older.id === row.id) continue;
    const kept = await keptName(ctx, older);
    try {
      await rename(join(outDir, file), join(outDir, kept));
      writeJobRecord(outDir, await store.markDownloaded(older, kept, out.key), true);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      await store.forgetDownload(older); // the user deleted it already
    }
  }
}

/**
 * The name a version's video is kept under beside the current one: `<id>.<hash>.mp4`, or with a
 * counter when another row holds that name (the same version made by another service, after
 * --new-service): a video is never written over by another's.
 */
export async function keptName(ctx: VersionsContext, row: JobRow): Promise<string> {
  for (let n = 1; ; n++) {
    const name = keptVideoFile(row.manifest, row.video_id, row.spec_hash, n);
    const holders = await filesHere(ctx, row.job_key, name);
    if (holders.every((other) => other.id === row.id)) return name;
  }
}

/**
 * Moves aside a file found where `row`'s video should be that is not that video: to
 * `<id>.<sha256 of its content, 8 hex>.mp4`, the naming of kept versions, under a name nothing
 * uses (a `-2`... suffix if need be), so nothing reel writes later can replace it. Returns that name.
 */
export async function keepChangedVideo({ outDir }: VersionsContext, row: JobRow): Promise<string> {
  const path = join(outDir, row.file!);
  const sha = await sha256File(path);
  for (let n = 1; ; n++) {
    const kept = keptVideoFile(row.manifest, row.video_id, sha, n);
    if (await lstat(join(outDir, kept)).catch(() => undefined)) continue;
    await rename(path, join(outDir, kept));
    return kept;
  }
}

/** Moves `row`'s video (kept under its hash name) back to `own`, `<id>.mp4`. */
export async function takeBackName(ctx: VersionsContext, row: JobRow, own: string): Promise<void> {
  const { store, outDir, out } = ctx;
  await keepPreviousVersion(ctx, row, own);
  await rename(join(outDir, row.file!), join(outDir, own));
  writeJobRecord(outDir, await store.markDownloaded(row, own, out.key));
  // Its record as a kept version, beside the video that just moved.
  await unlink(join(outDir, recordOfVideo(row.file!))).catch(() => {});
}
