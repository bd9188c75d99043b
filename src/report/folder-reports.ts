// results.jsonl and index.html of an output folder, in two passes over its rows (read from the store
// a batch at a time at each pass, at a run's end): the first writes results.jsonl and counts what the
// page's markup says, the second writes the page's data. Four passes (the page counting on its own)
// cost a 100,000-job run's end seconds of CPU.
import type { DecisionRow, JobRow } from "../state/job-store.js";
import { writeHtmlReport } from "./html-report.js";
import type { ReportRun } from "./report-options.js";
import { PageFacts } from "./report-summary.js";
import { onFirstPass, type ReportRows } from "./report-rows.js";
import { writeResults } from "./results.js";

export interface FolderReportsOptions {
  /**
   * The ids of the rows the run worked on. A row's id must be in it by the time the row is read on
   * the first pass: `rows` may add it as it gives the row (see onFirstPass).
   */
  readonly thisRun: ReadonlySet<number>;
  /** The latest decision of each job version, by versionKey. */
  readonly decisions: ReadonlyMap<string, DecisionRow>;
  /** How the run ended, for the page's banner: asked once the first pass is over. */
  readonly run: () => ReportRun;
  /** Given every row on the first pass, once, before it is written. @defaultValue none */
  readonly each?: (row: JobRow) => void;
}

export async function writeFolderReports(
  outDir: string,
  rows: ReportRows,
  options: FolderReportsOptions,
): Promise<void> {
  const { thisRun, decisions, each } = options;
  const facts = new PageFacts(thisRun);
  const firstPass = onFirstPass(rows, (row) => {
    each?.(row);
    facts.add(row);
  });
  await writeResults(outDir, firstPass, thisRun, decisions);
  await writeHtmlReport(outDir, firstPass, { run: options.run(), thisRun, decisions }, facts);
}
