// A run's rows as an array: RunSummary.rows reads them from the store a batch at a time.
import type { RunSummary } from "../../src/drivers/run-summary.js";
import type { JobRow } from "../../src/state/job-store.js";

export async function summaryRows(summary: Pick<RunSummary, "rows">): Promise<JobRow[]> {
  const rows: JobRow[] = [];
  for await (const row of summary.rows) rows.push(row);
  return rows;
}
