// OUT/results.jsonl: one line per video of the output folder (as its record shows it:
// output/job-record.ts, with `thisRun`: whether the run or watch that wrote it worked on the job;
// see folder-rows.ts for which videos), rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { resultOf } from "../output/job-record.js";
import { RESULTS_NAME } from "../output/layout.js";
import type { JobRow } from "../state/store.js";

/** `thisRun`: the ids of the rows the run worked on. @defaultValue none */
export async function writeResults(
  outDir: string,
  rows: readonly JobRow[],
  thisRun: ReadonlySet<number> = new Set(),
): Promise<void> {
  const text = rows
    .map((row) => JSON.stringify({ ...resultOf(row), thisRun: thisRun.has(row.id) }))
    .join("\n");
  await writeFileAtomic(join(outDir, RESULTS_NAME), rows.length ? `${text}\n` : "");
}
