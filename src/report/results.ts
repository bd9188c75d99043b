// OUT/results.jsonl: one line per job of the run (as its record shows it: output/job-record.ts),
// rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { resultOf } from "../output/job-record.js";
import { RESULTS_NAME } from "../output/layout.js";
import type { JobRow } from "../state/store.js";

export async function writeResults(outDir: string, rows: readonly JobRow[]): Promise<void> {
  const text = rows.map((row) => JSON.stringify(resultOf(row))).join("\n");
  await writeFileAtomic(join(outDir, RESULTS_NAME), rows.length ? `${text}\n` : "");
}
