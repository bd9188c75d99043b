// OUT/results.jsonl: one line per video of the output folder (as its record shows it:
// output/job-record.ts, with `thisRun`: whether the run or watch that wrote it worked on the job;
// see folder-rows.ts for which videos), rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { resultOf } from "../output/job-record.js";
import { RESULTS_NAME } from "../output/layout.js";
import { type DecisionRow, type JobRow, versionKey } from "../state/job-store.js";
import { TextPieces } from "./pieces.js";
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
  await writeFileAtomic(join(outDir, RESULTS_NAME), resultPieces(rows, thisRun, decisions));
}

/** The lines, in pieces (TextPieces): a folder of 100,000 jobs is ~50 MB of them. */
async function* resultPieces(
  rows: ReportRows,
  thisRun: ReadonlySet<number>,
  decisions: ReadonlyMap<string, DecisionRow> | undefined,
): AsyncGenerator<Uint8Array | string> {
  const pieces = new TextPieces();
  for await (const row of rows) {
    if (pieces.add(resultLine(row, thisRun, decisions))) yield* pieces.take();
  }
  yield* pieces.take();
}

/** A row's line of results.jsonl, with its newline. */
export function resultLine(
  row: JobRow,
  thisRun: ReadonlySet<number>,
  decisions: ReadonlyMap<string, DecisionRow> | undefined,
): string {
  const decision = decisions?.size ? decisions.get(versionKey(row.job_key, row.spec_hash)) : undefined;
  const json = JSON.stringify(resultOf(row, decision));
  // `thisRun` is the last key: added to the record's text rather than to a copy of the record.
  return `${json.slice(0, -1)},"thisRun":${thisRun.has(row.id)}}\n`;
}
