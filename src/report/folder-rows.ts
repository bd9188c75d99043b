// Which jobs the reports of an output folder (results.jsonl, index.html) list: every video of every
// manifest run into the folder (its latest job; a take counts as a video), not only those of the run
// or watch that writes them, whose own jobs are marked. The run's own manifests are listed as it
// leaves them (the videos they list now); the folder's other manifests as the store last knew them,
// until `reel forget` drops one.
import { outFolderOf } from "../output/out-folder.js";
import type { JobRow, JobStore } from "../state/job-store.js";
import { chainRows, type ReportRows } from "./report-rows.js";

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
  const { others, here } = await folderOf(store, outDir, manifests);
  const thisRun = new Set(worked.map((row) => row.id));
  return { rows: [...listed, ...(await others())].map(here), thisRun };
}

/**
 * folderRows for rows read from the store at each pass (a run's end): `listed` the rows of the run's
 * manifests, `thisRun` the ids of those the run worked on.
 */
export async function storedFolderRows(
  store: JobStore,
  outDir: string,
  listed: ReportRows,
  thisRun: ReadonlySet<number>,
  manifests: Iterable<string>,
): Promise<{ readonly rows: ReportRows; readonly thisRun: ReadonlySet<number> }> {
  const { others, here } = await folderOf(store, outDir, manifests);
  return { rows: chainRows(listed, others, here), thisRun };
}

async function folderOf(
  store: JobStore,
  outDir: string,
  manifests: Iterable<string>,
): Promise<{ others: () => Promise<JobRow[]>; here: (row: JobRow) => JobRow }> {
  const out = outFolderOf(outDir);
  const own = new Set(manifests);
  const names = new Set((await store.outManifests(out.key)).filter((name) => !own.has(name)));
  const others = async (): Promise<JobRow[]> =>
    names.size === 0 ? [] : (await store.listLatestJobs()).filter((row) => names.has(row.manifest));
  // A video recorded in another output folder (one state serving several) is not this one's.
  const here = (row: JobRow): JobRow =>
    row.file === null || out.holds(row.out_dir) ? row : { ...row, file: null };
  return { others, here };
}
