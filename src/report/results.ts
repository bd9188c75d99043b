// OUT/results.jsonl: one line per video of the output folder (as its record shows it:
// output/job-record.ts, with `thisRun`: whether the run or watch that wrote it worked on the job;
// see folder-rows.ts for which videos), rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { resultOf } from "../output/job-record.js";
import { RESULTS_NAME } from "../output/layout.js";
import { type DecisionRow, type JobRow, versionKey } from "../state/store.js";

/**
 * `thisRun`: the ids of the rows the run worked on (@defaultValue none); `decisions`: the latest
 * decision of each job version, by versionKey (none: every job undecided).
 */
export async function writeResults(
  outDir: string,
  rows: readonly JobRow[],
  thisRun: ReadonlySet<number> = new Set(),
  decisions?: ReadonlyMap<string, DecisionRow>,
): Promise<void> {
  const text = rows
    .map((row) =>
      JSON.stringify({
        ...resultOf(row, decisions?.get(versionKey(row.job_key, row.spec_hash))),
        thisRun: thisRun.has(row.id),
      }),
    )
    .join("\n");
  await writeFileAtomic(join(outDir, RESULTS_NAME), rows.length ? `${text}\n` : "");
}
