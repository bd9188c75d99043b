// OUT/results.jsonl: one line per video of the output folder (as its record shows it:
// output/job-record.ts, with `thisRun`: whether the run or watch that wrote it worked on the job;
// see folder-rows.ts for which videos), rewritten whole (atomically) each time.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { decisionFieldsOf } from "../output/decision-fields.js";
import { isoTime } from "../output/iso-time.js";
import { statusOf } from "../output/job-record.js";
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

/**
 * A row's line of results.jsonl, with its newline: the text of JSON.stringify of its record
 * (resultOf) with `thisRun` added last, written out field by field. Made through the record, the
 * lines cost a 100,000-job folder 0.1 s more; test/report/results.test.ts holds them byte for byte
 * to the record's text.
 */
export function resultLine(
  row: JobRow,
  thisRun: ReadonlySet<number>,
  decisions: ReadonlyMap<string, DecisionRow> | undefined,
): string {
  const decided = decisionFieldsOf(
    decisions?.size ? decisions.get(versionKey(row.job_key, row.spec_hash)) : undefined,
  );
  return `{"manifest":${text(row.manifest)},"id":${text(row.video_id)},"status":${text(statusOf(row))},"taskId":${text(row.task_id)},"file":${text(row.file)},"error":${text(row.error)},"attempts":${number(row.attempts)},"model":${text(row.model)},"seconds":${number(row.seconds)},"specHash":${text(row.spec_hash)},"createdAt":${time(row.created_at)},"submittedAt":${time(row.submitted_at)},"finishedAt":${time(row.finished_at)},"downloadedAt":${time(row.downloaded_at)},"decision":${text(decided.decision)},"reviewer":${text(decided.reviewer)},"decidedAt":${text(decided.decidedAt)},"note":${text(decided.note)},"thisRun":${thisRun.has(row.id)}}\n`;
}

const text = (value: string | null): string => (value === null ? "null" : JSON.stringify(value));
const number = (value: number): string => (Number.isFinite(value) ? String(value) : "null");
/** An ISO time holds nothing JSON escapes. */
const time = (ms: number | null): string => (ms === null ? "null" : `"${isoTime(ms)}"`);
