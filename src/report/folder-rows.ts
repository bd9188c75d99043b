// Which jobs the reports of an output folder (results.jsonl, index.html) list: every video of every
// manifest run into the folder (its latest job; a take counts as a video), not only those of the run
// or watch that writes them, whose own jobs are marked. The run's own manifests are listed as it
// leaves them (the videos they list now); the folder's other manifests as the store last knew them,
// until `reel forget` drops one.
import { outFolderOf } from "../output/out-folder.js";
import type { JobRow, JobStore } from "../state/job-store.js";

export interface FolderRows {
  /** The rows to list: the run's first, then those of the folder's other manifests, by name. */
  readonly rows: readonly JobRow[];
  /** The ids of the rows the run (or watch) worked on: marked in both reports. */
  readonly thisRun: ReadonlySet<number>;
}

/**
 * `listed`: the rows of the run's manifests; `worked`: those of them the run worked on (all of them,
 * but with --only); `manifests`: the run's manifests (their rows are `listed`, none other).
 */
export async function folderRows(
  store: JobStore,
  outDir: string,
  listed: readonly JobRow[],
  worked: readonly JobRow[],
  manifests: Iterable<string>,
): Promise<FolderRows> {
  const out = outFolderOf(outDir);
  const own = new Set(manifests);
  const others = new Set((await store.outManifests(out.key)).filter((name) => !own.has(name)));
  const thisRun = new Set(worked.map((row) => row.id));
  const latest =
    others.size === 0 ? [] : (await store.listLatestJobs()).filter((row) => others.has(row.manifest));
  // A video recorded in another output folder (one state serving several) is not this one's.
  const here = (row: JobRow): JobRow =>
    row.file === null || out.holds(row.out_dir) ? row : { ...row, file: null };
  return { rows: [...listed, ...latest].map(here), thisRun };
}
