// OUT/results.jsonl: one line per video of the output folder (as its record shows it:
// output/job-record.ts, with `thisRun`: whether the run or watch that wrote it worked on the job;
// see folder-rows.ts for which videos), rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { resultOf } from "../output/job-record.js";
import { RESULTS_NAME } from "../output/layout.js";
import { type DecisionRow, versionKey } from "../state/job-store.js";
import { PIECE_CHARS } from "./pieces.js";
import type { ReportRows } from "./report-rows.js";

/**
 * `thisRun`: the ids of the rows the run worked on (@defaultValue none); `decisions`: the latest
 * decision of each job version, by versionKey (none: every job undecided).
 */
export async function writeResults(
  outDir: string,
  rows: ReportRows,
  thisRun: ReadonlySet<number> = new Set(),
  decisions?: ReadonlyMap<string, DecisionRow>,
): Promise<void> {
  await writeFileAtomic(join(outDir, RESULTS_NAME), resultLines(rows, thisRun, decisions));
}

/** The lines, in pieces of about PIECE_CHARS: a folder of 100,000 jobs is ~50 MB of them. */
async function* resultLines(
  rows: ReportRows,
  thisRun: ReadonlySet<number>,
  decisions: ReadonlyMap<string, DecisionRow> | undefined,
): AsyncGenerator<string> {
  let piece = "";
  for await (const row of rows) {
    const json = JSON.stringify(resultOf(row, decisions?.get(versionKey(row.job_key, row.spec_hash))));
    // `thisRun` is the last key: added to the record's text rather than to a copy of the record.
    piece += `${json.slice(0, -1)},"thisRun":${thisRun.has(row.id)}}\n`;
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = "";
    }
  }
  if (piece !== "") yield piece;
}
