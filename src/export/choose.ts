// Which videos `reel export` hands over: the current version of each job, finished and downloaded,
// and by default only those whose latest decision is approved (`--status success`: every one).
import { join } from "node:path";
import type { ExportScope } from "../export-rules.js";
import type { DecisionRow, JobRow } from "../state/job-store.js";

/** A variable's value as the manifest gave it: a number stays a number in delivery.jsonl. */
export type VariableValue = string | number | boolean;

export interface ExportItem {
  readonly row: JobRow & { readonly base_url: string };
  readonly decision: DecisionRow | undefined;
  /** The job's placeholder variables (a matrix video's combination), by name; empty when none. */
  readonly variables: Readonly<Record<string, VariableValue>>;
  /** The video in the output folder, absolute. */
  readonly source: string;
}

export interface ChooseOptions {
  readonly scope: ExportScope;
  readonly only: (key: string) => boolean;
  /** The output folder of a row recorded by an earlier reel without one. */
  readonly outDir: string;
  readonly variablesOf: (key: string) => Readonly<Record<string, VariableValue>> | undefined;
}

export function chooseVideos(
  rows: readonly (JobRow & { readonly base_url: string })[],
  decisions: readonly DecisionRow[],
  options: ChooseOptions,
): ExportItem[] {
  // Decisions name their service as the rows do: by base URL, key and version.
  const decisionOf = new Map(decisions.map((d) => [`${d.baseUrl}\n${d.key}\n${d.specHash}`, d]));
  const chosen: ExportItem[] = [];
  for (const row of rows) {
    if (row.state !== "Success" || row.file === null || !options.only(row.job_key)) continue;
    const decision = decisionOf.get(`${row.base_url}\n${row.job_key}\n${row.spec_hash}`);
    if (options.scope === "approved" && decision?.decision !== "approved") continue;
    chosen.push({
      row,
      decision,
      variables: options.variablesOf(row.job_key) ?? {},
      source: join(row.out_dir ?? options.outDir, row.file),
    });
  }
  return chosen.sort((a, b) => (a.row.job_key < b.row.job_key ? -1 : a.row.job_key > b.row.job_key ? 1 : 0));
}
