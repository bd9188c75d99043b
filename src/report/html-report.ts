// OUT/index.html: the page people review a batch with. Self-contained (inline style and script, data
// embedded as JSON), so it opens from the file system with no server and no network.
//
// Node renders what needs no script (head, summary, filter controls) as escaped HTML, and embeds one
// JSON record per job; the inline script (report-script.ts) builds the cards from it with textContent
// only. A Content-Security-Policy allows exactly the page's own style and script (by hash) and local
// media, so even a mistake in escaping could not run a script that came from a manifest.
//
// The page's parts: report-job.ts (a job's record), report-summary.ts (the counts), report-banner.ts,
// summary-markup.ts (tiles, table, filters), page-markup.ts (head and tail), embedded-data.ts.
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";
import { REPORT_NAME } from "../output/layout.js";
import type { JobRow } from "../state/job-store.js";
import { EmbeddedData } from "./embedded-data.js";
import { PAGE_TAIL, pageHead } from "./page-markup.js";
import type { HtmlReportOptions } from "./report-options.js";
import { TextPieces } from "./pieces.js";
import { PageFacts } from "./report-summary.js";
import type { ReportRows } from "./report-rows.js";

/** The whole page, as a string. Pure: the same rows and options give the same page. */
export function renderHtmlReport(rows: readonly JobRow[], options: HtmlReportOptions = {}): string {
  return [...pagePieces(rows, options)].join("");
}

/** The page of an array of rows, in pieces (see htmlReportPieces). */
function* pagePieces(rows: readonly JobRow[], options: HtmlReportOptions): Generator<string> {
  const facts = new PageFacts(options.thisRun);
  for (const row of rows) facts.add(row);
  yield pageHead(facts, options);
  const data = new EmbeddedData(options);
  for (const row of rows) yield data.add(row);
  yield data.end();
  yield PAGE_TAIL;
}

/**
 * The page in pieces: the markup first (made from the rows' counts, a first pass over the rows), then
 * the jobs' data a piece at a time from a second pass, so that a folder of many jobs is never one
 * string in memory. A run's end writes the page in one pass instead (folder-reports.ts).
 */
async function* htmlReportPieces(
  rows: ReportRows,
  options: HtmlReportOptions,
): AsyncGenerator<Uint8Array | string> {
  const facts = new PageFacts(options.thisRun);
  for await (const row of rows) facts.add(row);
  yield pageHead(facts, options);
  const data = new EmbeddedData(options);
  const pieces = new TextPieces();
  for await (const row of rows) {
    if (pieces.add(data.add(row))) yield* pieces.take();
  }
  yield* pieces.take();
  yield `${data.end()}${PAGE_TAIL}`;
}

/** Writes `OUT/index.html` whole or not at all, so a page open in a browser is never half-written. */
export async function writeHtmlReport(
  outDir: string,
  rows: ReportRows,
  options: HtmlReportOptions = {},
): Promise<void> {
  await writeFileAtomic(join(outDir, REPORT_NAME), htmlReportPieces(rows, { outDir, ...options }));
}
