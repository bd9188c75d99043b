// OUT/results.jsonl: one line per job of the run (as its record shows it: output/job-record.ts),
// rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { resultOf } from "../output/job-record.js";
import { RESULTS_NAME } from "../output/layout.js";
import { type DecisionRow, type JobRow, versionKey } from "../state/store.js";

/** `decisions`: the latest decision of each job version, by versionKey (none: every job undecided). */
export async function writeResults(
  outDir: string,
  rows: readonly JobRow[],
  decisions?: ReadonlyMap<string, DecisionRow>,
): Promise<void> {
  const text = rows
    .map((row) => JSON.stringify(resultOf(row, decisions?.get(versionKey(row.job_key, row.spec_hash)))))
    .join("\n");
  await writeFileAtomic(join(outDir, RESULTS_NAME), rows.length ? `${text}\n` : "");
}
