// results.jsonl and index.html of an output folder, in one pass over its rows (read from the store a
// batch at a time, at a run's end): each row's line and its page data are made as it is read, and its
// counts taken for the page's head. The head comes before the data in the page but is known only at
// the end, so the data waits in a spool file beside the page (spool-file.ts) and is copied after it.
// Each pass cost a 100,000-job run's end about 0.5 s of CPU: there were four, then two.
import { join } from "node:path";
import { AtomicFile } from "../output/atomic-write.js";
import { REPORT_NAME, RESULTS_NAME } from "../output/layout.js";
import type { DecisionRow, JobRow } from "../state/job-store.js";
import { EmbeddedData } from "./embedded-data.js";
import { PAGE_TAIL, pageHead } from "./page-markup.js";
import type { HtmlReportOptions, ReportRun } from "./report-options.js";
import { TextPieces } from "./pieces.js";
import { PageFacts } from "./report-summary.js";
import { batchesOf, type ReportRows } from "./report-rows.js";
import { resultLine } from "./results.js";
import { SpoolFile } from "./spool-file.js";

export interface FolderReportsOptions {
  /**
   * The ids of the rows the run worked on. A row's id must be in it by the time the row is read:
   * `rows` may add it as it gives the row (see onFirstPass).
   */
  readonly thisRun: ReadonlySet<number>;
  /** The latest decision of each job version, by versionKey. */
  readonly decisions: ReadonlyMap<string, DecisionRow>;
  /** How the run ended, for the page's banner: asked once the rows are read. */
  readonly run: () => ReportRun;
  /** Given every row, once, before it is written. @defaultValue none */
  readonly each?: (row: JobRow) => void;
}

/**
 * Writes both files, each whole or not at all: results.jsonl first, then index.html (a failure in
 * between leaves the previous page).
 */
export async function writeFolderReports(
  outDir: string,
  rows: ReportRows,
  options: FolderReportsOptions,
): Promise<void> {
  const { thisRun, decisions, each } = options;
  const facts = new PageFacts(thisRun);
  const data = new EmbeddedData({ outDir, thisRun, decisions });
  const lines = new TextPieces();
  const records = new TextPieces();
  const results = await AtomicFile.open(join(outDir, RESULTS_NAME));
  let spool: SpoolFile | undefined;
  let page: AtomicFile | undefined;
  try {
    spool = await SpoolFile.beside(join(outDir, REPORT_NAME));
    for await (const batch of batchesOf(rows)) {
      for (const row of batch) {
        each?.(row);
        facts.add(row);
        if (lines.add(resultLine(row, thisRun, decisions))) {
          for (const piece of lines.take()) await results.write(piece);
        }
        if (records.add(data.add(row))) for (const piece of records.take()) await spool.write(piece);
      }
    }
    for (const piece of lines.take()) await results.write(piece);
    await results.commit();
    for (const piece of records.take()) await spool.write(piece);
    page = await AtomicFile.open(join(outDir, REPORT_NAME));
    const head: HtmlReportOptions = { outDir, run: options.run(), thisRun, decisions };
    await page.write(pageHead(facts, head));
    for await (const piece of spool.pieces()) await page.write(piece);
    await page.write(`${data.end()}${PAGE_TAIL}`);
    await page.commit();
  } catch (error) {
    await results.abandon();
    await page?.abandon();
    throw error;
  } finally {
    await spool?.remove();
  }
}
