// The page's markup around the jobs' data: the head (policy, style, title, banner, counts, filters)
// made from the counts alone, and the tail that closes the data and carries the script.
import { createHash } from "node:crypto";
import { plural } from "../plural.js";
import { escapeHtml } from "./escape-html.js";
import { REPORT_JS } from "./report-script.js";
import { REPORT_CSS } from "./report-style.js";
import { bannerOf, renderBanner } from "./report-banner.js";
import type { HtmlReportOptions, ReportRun } from "./report-options.js";
import type { PageFacts } from "./report-summary.js";
import { renderControls, renderRunFilter, renderSummaryTable, renderTiles } from "./summary-markup.js";

const sha256Base64 = (text: string): string => createHash("sha256").update(text, "utf8").digest("base64");

// The hashes never change while the process lives: computed once.
const CSP = [
  "default-src 'none'",
  `style-src 'sha256-${sha256Base64(REPORT_CSS)}'`,
  `script-src 'sha256-${sha256Base64(REPORT_JS)}'`,
  // 'self' when the folder is served over HTTP; file: when the page is opened from the disk.
  "media-src 'self' file:",
  // Source images: local files beside the page, or the https address a manifest gave.
  "img-src 'self' data: file: https:",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

const timeElement = (at: Date): string =>
  `<time datetime="${at.toISOString()}">${at.toISOString().slice(0, 19).replace("T", " ")} UTC</time>`;

/** The service as the user named it: the sandbox, or the base URL without anything but its address. */
function serviceText(service: string): string {
  if (!/^https?:\/\//i.test(service)) return "sandbox (built-in emulator)";
  try {
    const url = new URL(service);
    return `${url.origin}${url.pathname === "/" ? "" : url.pathname}`;
  } catch {
    return "(unreadable address)";
  }
}

/** The line under the title: which service, when the run or watch started, when the page was written. */
function renderMeta(run: ReportRun | undefined, now: Date, manifests: number): string {
  const parts: string[] = [];
  if (run?.service !== undefined) {
    parts.push(`Service: <span id="service">${escapeHtml(serviceText(run.service))}</span>`);
  }
  const watch = run?.outcome === "watching" || run?.outcome === "stopped";
  if (run?.startedAt) parts.push(`${watch ? "Watch" : "Run"} started ${timeElement(run.startedAt)}`);
  parts.push(`${run?.startedAt ? "written" : "Written"} ${timeElement(now)}`);
  parts.push(escapeHtml(plural(manifests, "manifest", "manifests")));
  parts.push(`every job as JSON lines: <a href="results.jsonl">results.jsonl</a>`);
  return `<p class="meta">${parts.join(" · ")}</p>`;
}

/** The markup before the jobs' data: made from the counts alone. */
export function pageHead(facts: PageFacts, options: HtmlReportOptions): string {
  const title = options.title ?? "reel report";
  const now = options.now ?? new Date();
  const summary = facts.all.summary();
  const run = options.run;
  // The banner speaks of what the run did: its own jobs, not the rest of the folder.
  const runSummary = facts.own.summary();
  const own = options.thisRun ? runSummary.total.jobs : 0;
  // Only while a watch runs: the page reloads itself to show what the watch wrote since.
  const refresh = run?.outcome === "watching" ? Math.max(1, Math.round(options.refreshSeconds ?? 3)) : 0;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="reel">
<title>${escapeHtml(title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body${refresh > 0 ? ` data-refresh="${refresh}"` : ""}>
<header class="page-head">
<h1>${escapeHtml(title)}</h1>
${renderMeta(run, now, summary.manifests.length)}
</header>
${run ? renderBanner(bannerOf(run, runSummary, facts.ownFailed)) : ""}
${renderTiles(summary)}
${renderSummaryTable(summary)}
${renderControls(summary, renderRunFilter(own, summary.total.jobs, run))}
<main id="cards"></main>
<p id="empty" hidden>No job matches these filters.</p>
<noscript><p id="noscript">The job cards need JavaScript; every job is also in <a href="results.jsonl">results.jsonl</a>.</p></noscript>
<script type="application/json" id="reel-data">`;
}

export const PAGE_TAIL = `</script>
<script>${REPORT_JS}</script>
</body>
</html>
`;
