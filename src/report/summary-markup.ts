// The markup of the counts: the totals as tiles, the table per manifest, and the filter controls.
import { formatDuration } from "../duration.js";
import { plural } from "../plural.js";
import { escapeHtml } from "./escape-html.js";
import type { ReportRun } from "./report-options.js";
import type { ManifestSummary, ReportSummary } from "./report-summary.js";

const STATUS_CLASS: Readonly<Record<string, string>> = {
  Success: "s-success",
  Fail: "s-fail",
  Canceled: "s-canceled",
  uncertain: "s-uncertain",
};

/** Seconds of video as a reviewer reads them: "42 s", "3 min 20 s". */
const formatSeconds = (seconds: number): string => formatDuration(seconds * 1_000);

const statusClass = (status: string): string => STATUS_CLASS[status] ?? "s-active";

/** The totals; each count of jobs is a button that filters the cards to its status (all: every job). */
export function renderTiles(summary: ReportSummary): string {
  const { total } = summary;
  const tiles = [
    `<button type="button" class="tile" data-status="" title="Show every job"><b>${total.jobs}</b><span>${total.jobs === 1 ? "job" : "jobs"}</span></button>`,
    ...summary.statuses.map(
      (status) =>
        `<button type="button" class="tile ${statusClass(status)}" data-status="${escapeHtml(status)}" title="Show only ${escapeHtml(status)} jobs"><b>${total.byStatus.get(status) ?? 0}</b><span>${escapeHtml(status)}</span></button>`,
    ),
    `<div class="tile"><b>${escapeHtml(formatSeconds(total.doneSeconds))}</b><span>of video done, of ${escapeHtml(formatSeconds(total.seconds))} in all</span></div>`,
  ];
  return `<section class="tiles" aria-label="Totals">${tiles.join("")}</section>`;
}

export function renderSummaryTable(summary: ReportSummary): string {
  const cells = (s: ManifestSummary): string =>
    [
      `<td>${s.jobs}</td>`,
      ...summary.statuses.map((status) => `<td>${s.byStatus.get(status) ?? ""}</td>`),
      `<td title="${s.doneSeconds} s of ${s.seconds} s">${escapeHtml(formatSeconds(s.doneSeconds))} / ${escapeHtml(formatSeconds(s.seconds))}</td>`,
    ].join("");
  const head = [
    "<th>manifest</th><th>jobs</th>",
    ...summary.statuses.map((status) => `<th>${escapeHtml(status)}</th>`),
    "<th>video done / all</th>",
  ].join("");
  const body = summary.manifests.map((m) => `<tr><td>${escapeHtml(m.name)}</td>${cells(m)}</tr>`).join("\n");
  return `<section class="summary"><table id="summary">
<thead><tr>${head}</tr></thead>
<tbody>
${body}
</tbody>
<tfoot><tr><td>all manifests</td>${cells(summary.total)}</tr></tfoot>
</table></section>`;
}

/**
 * The checkbox that shows only the jobs the run (or watch) worked on: only when the page lists others
 * too (the folder's other manifests, or with --only the videos left out).
 */
export function renderRunFilter(own: number, all: number, run: ReportRun | undefined): string {
  if (own === 0 || own === all) return "";
  const which = run?.outcome === "watching" || run?.outcome === "stopped" ? "this watch" : "this run";
  return `<label><input type="checkbox" id="filter-run" data-mark="${which}"> only ${which}'s jobs (${own})</label>\n`;
}

export function renderControls(summary: ReportSummary, runFilter: string): string {
  const option = (value: string, label: string): string =>
    `<option value="${escapeHtml(value)}">${escapeHtml(label)}</option>`;
  const statuses = [
    option("", "all"),
    ...summary.statuses.map((s) => option(s, `${s} (${summary.total.byStatus.get(s) ?? 0})`)),
  ].join("");
  const manifests = [
    option("", "all"),
    ...summary.manifests.map((m) => option(m.name, `${m.name} (${m.jobs})`)),
  ].join("");
  return `<section class="controls" id="controls" aria-label="Filters">
<label>Status <select id="filter-status">${statuses}</select></label>
<label>Manifest <select id="filter-manifest">${manifests}</select></label>
<label>Search <input type="search" id="filter-text" placeholder="ids and prompts" autocomplete="off"></label>
${runFilter}
<label>Sort <select id="sort"><option value="">as listed</option><option value="status">by status</option><option value="recent">latest first</option><option value="oldest">oldest first</option></select></label>
<button type="button" id="filter-clear">Clear</button>
<span id="shown" aria-live="polite">${escapeHtml(plural(summary.total.jobs, "job", "jobs"))}</span>
<span id="pager" hidden><button type="button" id="page-prev">&lsaquo; previous</button> <span id="page-at"></span> <button type="button" id="page-next">next &rsaquo;</button></span>
</section>`;
}
