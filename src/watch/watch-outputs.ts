// What a watch writes and says of its jobs: results.jsonl and index.html (rewritten through the
// context's ReportThrottle), the decisions made beside it, and a line per manifest whose jobs are
// all final.
import { resultOf } from "../output/job-record.js";
import { writeFolderReports } from "../report/folder-reports.js";
import { folderRows } from "../report/folder-rows.js";
import { writeDecisionRecords } from "../review/decision-records.js";
import { decisionsByVersion, type JobRow } from "../state/job-store.js";
import type { WatchContext } from "./watch-context.js";

/**
 * results.jsonl and index.html: the jobs of the manifests in the folder now, marked as the watch's,
 * and the other videos of the output folder (report/folder-rows.ts), with their decisions.
 */
export async function writeOutputs(ctx: WatchContext): Promise<void> {
  const { options } = ctx;
  const start = performance.now();
  const rows = await ctx.engine.wantedRows();
  sayFinished(ctx, rows);
  const folder = await folderRows(
    options.store,
    options.outDir,
    rows,
    rows,
    rows.map((row) => row.manifest),
  );
  const latest = await options.store.latestDecisions();
  ctx.decisionsSeen = lastDecision(latest);
  const decisions = decisionsByVersion(latest);
  await writeFolderReports(options.outDir, folder.rows, {
    thisRun: folder.thisRun,
    run: () => ({
      outcome: ctx.watching ? "watching" : "stopped",
      ...(options.service !== undefined ? { service: options.service } : {}),
      ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      startedAt: ctx.startedAt,
    }),
    decisions,
  });
  writeDecisionRecords(options.outDir, folder.rows, decisions);
  options.logger?.debug(
    { jobs: folder.rows.length, ms: Math.round(performance.now() - start), watching: ctx.watching },
    "reports written",
  );
}

/** Decisions are made beside the watch (reel approve, the review page): looked for at each check. */
export async function writeNewDecisions(ctx: WatchContext): Promise<void> {
  if (lastDecision(await ctx.options.store.latestDecisions()) === ctx.decisionsSeen) return;
  ctx.reports.changed();
}

/**
 * A line per manifest whose jobs are all final ("spring: 12 Success, 1 Fail"), once per reading
 * of it and outcome: a watcher's user waits for exactly that.
 */
export function sayFinished(ctx: WatchContext, rows: readonly JobRow[]): void {
  const byManifest = new Map<string, JobRow[]>();
  for (const row of rows) {
    const list = byManifest.get(row.manifest) ?? [];
    list.push(row);
    byManifest.set(row.manifest, list);
  }
  for (const [manifest, list] of byManifest) {
    const final = list.every((row) =>
      row.state === "Success" ? row.file !== null : FINAL_STATES.has(row.state),
    );
    if (!final) continue;
    const counts = new Map<string, number>();
    for (const row of list) {
      const { status } = resultOf(row);
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    const text = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
    if (ctx.finishedSaid.get(manifest) === text) continue;
    ctx.finishedSaid.set(manifest, text);
    ctx.progress.event({ stage: "finished", key: manifest, detail: text });
  }
}

/** The id of the latest of `decisions` (0: none): a decision made since has a higher one. */
function lastDecision(decisions: readonly { readonly id: number }[]): number {
  return decisions.reduce((last, row) => Math.max(last, row.id), 0);
}

const FINAL_STATES: ReadonlySet<JobRow["state"]> = new Set(["Fail", "Canceled", "uncertain"]);
