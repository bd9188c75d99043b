// OUT/index.html: the page people review a batch with. Self-contained (inline style and script, data
// embedded as JSON), so it opens from the file system with no server and no network.
//
// Node renders what needs no script (head, summary, filter controls) as escaped HTML, and embeds one
// JSON record per job; the inline script (report-page.ts) builds the cards from it with textContent
// only. A Content-Security-Policy allows exactly the page's own style and script (by hash) and local
// media, so even a mistake in escaping could not run a script that came from a manifest.
import { createHash } from "node:crypto";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { DEFAULTS } from "../defaults.js";
import { formatDuration } from "../duration.js";
import { plural } from "../plural.js";
import { writeFileAtomic } from "../output/atomic-write.js";
import { statusOf } from "../output/job-record.js";
import { recordFile, REPORT_NAME } from "../output/layout.js";
import { type DecisionFields, decisionFieldsOf } from "../output/decision-fields.js";
import { failureSteps } from "../advice/failure-steps.js";
import { type DecisionRow, type JobRow, versionKey } from "../state/job-store.js";
import { escapeHtml, jsonForScript, relativeHref } from "./escape-html.js";
import { PIECE_CHARS } from "./pieces.js";
import type { ReportRows } from "./report-rows.js";
import { REPORT_CSS, REPORT_JS } from "./report-page.js";
import { isRecord } from "../values.js";
import { readStoredSpec } from "../stored-spec.js";

/** How a run ended (or a watch stands), as the report's banner says it. */
export type ReportOutcome =
  "completed" | "incomplete" | "capped" | "fatal" | "interrupted" | "watching" | "stopped";

/** What the page says of the run or watch that wrote it. */
export interface ReportRun {
  /** A run: how it ended. A watch: "watching" while it runs (the page refreshes itself), "stopped" after. */
  readonly outcome: ReportOutcome;
  /** What stopped the run (outcome "fatal"): its code picks the next step the banner gives. */
  readonly fatal?: { readonly code: string; readonly message: string };
  /** The service, as the user knows it: "sandbox" or its base URL (which never holds the key). */
  readonly service?: string;
  /** When the run or watch started. */
  readonly startedAt?: Date;
  /**
   * Attempts a job may have in all (--max-attempts): the banner advises --retry-failed only for
   * failed jobs with attempts left. @defaultValue DEFAULTS.maxAttempts
   */
  readonly maxAttempts?: number;
}

export interface HtmlReportOptions {
  /** Heading and document title. @defaultValue "reel report" */
  readonly title?: string;
  /** The time the page says it was made. @defaultValue the current time */
  readonly now?: Date;
  /** The run or watch that wrote the page: banner, service and times. @defaultValue none said */
  readonly run?: ReportRun;
  /**
   * The folder the page is written in, so that local source images are shown as links relative to
   * it (never inlined). writeHtmlReport sets it. @defaultValue none: no local thumbnails
   */
  readonly outDir?: string;
  /** With outcome "watching": seconds between the page's reloads of itself. @defaultValue 3 */
  readonly refreshSeconds?: number;
  /** The latest decision of each job version, by versionKey: shown on its card. @defaultValue none */
  readonly decisions?: ReadonlyMap<string, DecisionRow>;
  /**
   * The ids of the rows the run (or watch) worked on, among the folder's: marked on their cards, a
   * filter of their own, and what the banner speaks of. @defaultValue none marked: the banner speaks
   * of every row
   */
  readonly thisRun?: ReadonlySet<number>;
}

/** One chunk as the page shows it. */
export interface ReportChunk {
  readonly duration: number;
  readonly text: string | null;
  /** The text of generated speech. */
  readonly speech: string | null;
  /** The voice of generated speech. */
  readonly voice: string | null;
  /** Where given audio comes from: a file name, a URL, or `asset <id>`. */
  readonly audio: string | null;
}

/**
 * The record of one job embedded in the page: what a card shows and what the filters match. Times
 * are milliseconds since the epoch (the page shows them in the reader's zone; ISO text for 100,000
 * jobs cost more to make than the rest of the record).
 */
export interface ReportJob extends Omit<DecisionFields, "decidedAt"> {
  readonly manifest: string;
  readonly id: string;
  readonly status: string;
  readonly model: string;
  readonly resolution: string | null;
  readonly aspectRatio: string | null;
  readonly seed: number | null;
  /** Where the source image comes from, as for `ReportChunk.audio`. */
  readonly source: string | null;
  /**
   * The source image to show: a URL relative to the page for a local file (percent-encoded
   * segments), or the https address of a remote one; null for an uploaded asset or none.
   */
  readonly thumb: string | null;
  readonly seconds: number;
  readonly attempts: number;
  readonly taskId: string | null;
  readonly error: string | null;
  readonly createdAt: number;
  readonly submittedAt: number | null;
  readonly finishedAt: number | null;
  readonly downloadedAt: number | null;
  readonly decidedAt: number | null;
  readonly chunks: readonly ReportChunk[];
  /** Relative URL of the video, or null when none was downloaded. */
  readonly video: string | null;
  /** Relative URL of the job's `.json` record. */
  readonly record: string;
  /** Whether the run (or watch) that wrote the page worked on the job. */
  readonly thisRun: boolean;
}

export interface ManifestSummary {
  /** The manifest's name; the empty string for the total. */
  readonly name: string;
  readonly jobs: number;
  readonly byStatus: ReadonlyMap<string, number>;
  /** Seconds of video of all the jobs. */
  readonly seconds: number;
  /** Seconds of video of the jobs that ended Success. */
  readonly doneSeconds: number;
}

export interface ReportSummary {
  /** Every status present, final ones first, in the order the summary shows them. */
  readonly statuses: readonly string[];
  readonly total: ManifestSummary;
  readonly manifests: readonly ManifestSummary[];
}

/** Final outcomes first (what a reviewer looks for), then jobs still on their way, latest stage first. */
const STATUS_ORDER = [
  "Success",
  "Fail",
  "Canceled",
  "uncertain",
  "Running",
  "Pending",
  "PreProcessing",
  "submitting",
  "unsent",
];

const STATUS_CLASS: Readonly<Record<string, string>> = {
  Success: "s-success",
  Fail: "s-fail",
  Canceled: "s-canceled",
  uncertain: "s-uncertain",
};

function statusRank(status: string): number {
  const rank = STATUS_ORDER.indexOf(status);
  return rank < 0 ? STATUS_ORDER.length : rank;
}

export function compareStatuses(a: string, b: string): number {
  return statusRank(a) - statusRank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

// ---- the job records ----

const stringOr = (v: unknown): string | null => (typeof v === "string" ? v : null);
const numberOr = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Names a reference without the local path: absolute paths say nothing to a reviewer and may be private. */
function describeRef(ref: unknown): string | null {
  if (!isRecord(ref)) return null;
  switch (ref.kind) {
    case "file":
      return typeof ref.path === "string" ? basename(ref.path) : "file";
    case "url":
      return stringOr(ref.url);
    case "asset":
      return typeof ref.id === "string" || typeof ref.id === "number" ? `asset ${ref.id}` : "asset";
    default:
      return null;
  }
}

/**
 * Where the page can show the source image from: a local file as a path relative to the page (the
 * page links to it, as to the videos; nothing is copied into it), an https source by its address.
 */
function thumbOf(ref: unknown, outDir: string | undefined): string | null {
  if (!isRecord(ref)) return null;
  if (ref.kind === "url" && typeof ref.url === "string" && /^https:\/\//i.test(ref.url)) return ref.url;
  if (ref.kind !== "file" || typeof ref.path !== "string" || outDir === undefined) return null;
  const path = relative(outDir, ref.path);
  if (path === "" || isAbsolute(path)) return null; // another drive: no relative link exists
  return relativeHref(path.split(sep).join("/"));
}

const idOr = (v: unknown): string | null =>
  typeof v === "string" || typeof v === "number" ? String(v) : null;

function chunkOf(chunk: unknown): ReportChunk {
  if (!isRecord(chunk)) return { duration: 0, text: null, speech: null, voice: null, audio: null };
  const audio = chunk.audio;
  const isSpeech = isRecord(audio) && audio.kind === "speech";
  return {
    duration: numberOr(chunk.duration) ?? 0,
    text: stringOr(chunk.text),
    speech: isSpeech ? stringOr(audio.text) : null,
    voice: isSpeech ? idOr(audio.voiceId) : null,
    audio: isSpeech ? null : describeRef(audio),
  };
}

/**
 * `outDir`: the page's folder, for links to local source images (none without it); `thisRun`:
 * whether the run that writes the page worked on the job; `decision`: the latest decision of the
 * job's version, if any.
 */
export function toReportJob(
  row: JobRow,
  outDir?: string,
  thisRun = false,
  decision?: DecisionRow,
): ReportJob {
  const spec = readStoredSpec(row.spec_json);
  const decided = decisionFieldsOf(decision);
  return {
    manifest: row.manifest,
    id: row.video_id,
    status: statusOf(row),
    model: row.model,
    resolution: spec.resolution ?? null,
    aspectRatio: spec.aspectRatio ?? null,
    seed: spec.seed ?? null,
    source: describeRef(spec.source),
    thumb: thumbOf(spec.source, outDir),
    seconds: row.seconds,
    attempts: row.attempts,
    taskId: row.task_id,
    error: row.error,
    createdAt: row.created_at,
    submittedAt: row.submitted_at,
    finishedAt: row.finished_at,
    downloadedAt: row.downloaded_at,
    chunks: spec.chunks.map(chunkOf),
    video: row.file === null ? null : relativeHref(row.file),
    record: relativeHref(recordFile(row.manifest, row.video_id, row.spec_hash, false)),
    decision: decided.decision,
    reviewer: decided.reviewer,
    decidedAt: decided.decision === null ? null : decision!.decidedAt,
    note: decided.note,
    thisRun,
  };
}

// ---- the summary ----

interface MutableSummary {
  name: string;
  jobs: number;
  byStatus: Map<string, number>;
  seconds: number;
  doneSeconds: number;
}

const emptySummary = (name: string): MutableSummary => ({
  name,
  jobs: 0,
  byStatus: new Map(),
  seconds: 0,
  doneSeconds: 0,
});

function add(summary: MutableSummary, job: Pick<ReportJob, "status" | "seconds">): void {
  summary.jobs++;
  summary.byStatus.set(job.status, (summary.byStatus.get(job.status) ?? 0) + 1);
  summary.seconds += job.seconds;
  if (job.status === "Success") summary.doneSeconds += job.seconds;
}

/** Counts by status and seconds of video, in all and per manifest, a job at a time. */
class SummaryTally {
  private readonly total = emptySummary("");
  private readonly manifests = new Map<string, MutableSummary>();

  add(job: Pick<ReportJob, "manifest" | "status" | "seconds">): void {
    add(this.total, job);
    let summary = this.manifests.get(job.manifest);
    if (!summary) {
      summary = emptySummary(job.manifest);
      this.manifests.set(job.manifest, summary);
    }
    add(summary, job);
  }

  summary(): ReportSummary {
    return {
      statuses: [...this.total.byStatus.keys()].sort(compareStatuses),
      total: this.total,
      manifests: [...this.manifests.values()],
    };
  }
}

/** Counts by status and seconds of video, in all and per manifest (manifests in order of first appearance). */
export function summarizeJobs(
  jobs: readonly Pick<ReportJob, "manifest" | "status" | "seconds">[],
): ReportSummary {
  const tally = new SummaryTally();
  for (const job of jobs) tally.add(job);
  return tally.summary();
}

// ---- the page ----

/** Seconds of video as a reviewer reads them: "42 s", "3 min 20 s". */
const formatSeconds = (seconds: number): string => formatDuration(seconds * 1_000);

const statusClass = (status: string): string => STATUS_CLASS[status] ?? "s-active";

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

/** The totals; each count of jobs is a button that filters the cards to its status (all: every job). */
function renderTiles(summary: ReportSummary): string {
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

function renderSummaryTable(summary: ReportSummary): string {
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
function renderRunFilter(own: number, all: number, run: ReportRun | undefined): string {
  if (own === 0 || own === all) return "";
  const which = run?.outcome === "watching" || run?.outcome === "stopped" ? "this watch" : "this run";
  return `<label><input type="checkbox" id="filter-run" data-mark="${which}"> only ${which}'s jobs (${own})</label>\n`;
}

function renderControls(summary: ReportSummary, runFilter: string): string {
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

/** A banner: a class for its colour, a headline, what happened, and what to do next. */
interface Banner {
  readonly kind: "ok" | "warn" | "stop" | "live";
  readonly title: string;
  readonly detail?: string;
  readonly next?: string;
}

/** The next step after a stop, by the code of what stopped the run. */
function fatalBanner(fatal: NonNullable<ReportRun["fatal"]>): Banner {
  switch (fatal.code) {
    case "E_CREDITS":
      return {
        kind: "stop",
        title: "Stopped: no credits left",
        detail: fatal.message,
        next: "Add credits on the service's console, then run the same command again: what is done or paid for is not paid again.",
      };
    case "E_AUTH":
      return {
        kind: "stop",
        title: "Stopped: the service refused the API key",
        detail: fatal.message,
        next: "Set REEL_API_KEY to a valid key (from the service's console), then run the same command again.",
      };
    case "E_OUTPUT_DISK":
      return {
        kind: "stop",
        title: "Stopped: the output folder's disk refused a write",
        detail: fatal.message,
        next: "Free some space (or fix the disk), then run the same command again: nothing is lost.",
      };
    default:
      return {
        kind: "stop",
        title: "Stopped: the service could not be used",
        detail: fatal.message,
        next: "Check the service's address and your network, then run the same command again: it resumes.",
      };
  }
}

/**
 * What the jobs that did not succeed call for, once the work is over: for failed ones, the steps the
 * run's summary gives (advice/failure-steps.ts), worded for a watch after one.
 */
function jobsBanner(
  summary: ReportSummary,
  failed: readonly JobRow[],
  run: ReportRun,
  title: string,
  watch: boolean,
): Banner {
  const uncertain = summary.total.byStatus.get("uncertain") ?? 0;
  const steps = failureSteps(
    failed,
    run.maxAttempts ?? DEFAULTS.maxAttempts,
    watch ? "start the watch again" : "rerun",
  ).map((step) => step.text);
  if (uncertain > 0) {
    steps.push(
      `${plural(uncertain, "job is", "jobs are")} uncertain: a paid request may have reached the service without an answer. Check the service's console; --resubmit-uncertain sends it again (it may be paid twice).`,
    );
  }
  if (steps.length === 0) return { kind: "ok", title };
  return { kind: "warn", title, next: steps.join(" ") };
}

/** `failed`: the rows the banner speaks of that failed or were canceled (its next steps). */
function bannerOf(run: ReportRun, summary: ReportSummary, failed: readonly JobRow[]): Banner {
  switch (run.outcome) {
    case "fatal":
      return run.fatal
        ? fatalBanner(run.fatal)
        : { kind: "stop", title: "Stopped", next: "Run the same command again: it resumes." };
    case "interrupted":
      return {
        kind: "stop",
        title: "Interrupted",
        next: "Tasks already submitted keep running on the service; run the same command again to resume (nothing is submitted twice).",
      };
    case "capped":
      return {
        kind: "stop",
        title: "Stopped at the budget's cap: jobs not submitted",
        next: "Nothing was paid for the jobs still pending. Run the same command with a higher --max-seconds or --max-credits to go on (what this run spent counts against it).",
      };
    case "incomplete":
      return {
        kind: "warn",
        title: "Not finished: some jobs are not final yet",
        next: "Run the same command again to go on (nothing is submitted twice).",
      };
    case "watching":
      return {
        kind: "live",
        title: "Watching: reel watch is running",
        detail: "This page reloads itself as the watch rewrites it.",
      };
    case "stopped": {
      const banner = jobsBanner(summary, failed, run, "The watch has stopped", true);
      const resume = "Tasks already submitted keep running; start the watch again to follow them.";
      return { ...banner, next: banner.next ? `${banner.next} ${resume}` : resume };
    }
    case "completed":
      return jobsBanner(
        summary,
        failed,
        run,
        summary.total.jobs === (summary.total.byStatus.get("Success") ?? 0)
          ? "Completed: every job succeeded"
          : "Completed",
        false,
      );
  }
}

function renderBanner(banner: Banner): string {
  const parts = [`<strong>${escapeHtml(banner.title)}</strong>`];
  if (banner.detail) parts.push(`<span class="detail">${escapeHtml(banner.detail)}</span>`);
  if (banner.next) parts.push(`<span class="next">${escapeHtml(banner.next)}</span>`);
  const role = banner.kind === "stop" ? "alert" : "status";
  return `<section id="banner" class="banner b-${banner.kind}" role="${role}">${parts.join(" ")}</section>`;
}

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

/** The whole page, as a string. Pure: the same rows and options give the same page. */
export function renderHtmlReport(rows: readonly JobRow[], options: HtmlReportOptions = {}): string {
  return [...pagePieces(rows, options)].join("");
}

/**
 * The fields of a job embedded in the page, in this order: each job is embedded as the array of its
 * values (chunks likewise), and the page puts the names back. The names 100,000 times over were half
 * of a big folder's page.
 */
export const EMBEDDED_JOB_FIELDS = [
  "manifest",
  "id",
  "status",
  "model",
  "resolution",
  "aspectRatio",
  "seed",
  "source",
  "thumb",
  "seconds",
  "attempts",
  "taskId",
  "error",
  "createdAt",
  "submittedAt",
  "finishedAt",
  "downloadedAt",
  "chunks",
  "video",
  "record",
  "decision",
  "reviewer",
  "decidedAt",
  "note",
  "thisRun",
] as const satisfies readonly (keyof ReportJob)[];

export const EMBEDDED_CHUNK_FIELDS = [
  "duration",
  "text",
  "speech",
  "voice",
  "audio",
] as const satisfies readonly (keyof ReportChunk)[];

function packedJob(job: ReportJob): unknown[] {
  return EMBEDDED_JOB_FIELDS.map((field) =>
    field === "chunks"
      ? job.chunks.map((chunk) => EMBEDDED_CHUNK_FIELDS.map((key) => chunk[key]))
      : job[field],
  );
}

/** The embedded data, `{"jobs":[...],"chunks":[...],"rows":[[...],...]}`, a row at a time, in pieces. */
class EmbeddedData {
  private piece = `{"jobs":${jsonForScript(EMBEDDED_JOB_FIELDS)},"chunks":${jsonForScript(EMBEDDED_CHUNK_FIELDS)},"rows":[`;
  private first = true;

  constructor(private readonly options: HtmlReportOptions) {}

  /** Adds a row; returns a piece once one is big enough to write. */
  add(row: JobRow): string | undefined {
    const { options } = this;
    const job = toReportJob(
      row,
      options.outDir,
      options.thisRun?.has(row.id) ?? false,
      options.decisions?.get(versionKey(row.job_key, row.spec_hash)),
    );
    this.piece += `${this.first ? "" : ","}${jsonForScript(packedJob(job))}`;
    this.first = false;
    if (this.piece.length < PIECE_CHARS) return undefined;
    const piece = this.piece;
    this.piece = "";
    return piece;
  }

  end(): string {
    return `${this.piece}]}`;
  }
}

/**
 * What the markup says of the rows, counted in one pass before their data is written: the totals,
 * and of the run's own rows (the banner's), their totals and those that failed (its next steps).
 * A row's id must be in `thisRun` (when it is the run's) by the time the row is added.
 */
export class PageFacts {
  readonly all = new SummaryTally();
  readonly own = new SummaryTally();
  readonly ownFailed: JobRow[] = [];

  constructor(private readonly thisRun: ReadonlySet<number> | undefined) {}

  add(row: JobRow): void {
    const counted = { manifest: row.manifest, status: statusOf(row), seconds: row.seconds };
    this.all.add(counted);
    if (this.thisRun && !this.thisRun.has(row.id)) return;
    this.own.add(counted);
    if (row.state === "Fail" || row.state === "Canceled") this.ownFailed.push(row);
  }
}

/** The markup before the jobs' data: made from the counts alone. */
function pageHead(facts: PageFacts, options: HtmlReportOptions): string {
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

const PAGE_TAIL = `</script>
<script>${REPORT_JS}</script>
</body>
</html>
`;

/** The page of an array of rows, in pieces (see htmlReportPieces). */
function* pagePieces(rows: readonly JobRow[], options: HtmlReportOptions): Generator<string> {
  const facts = new PageFacts(options.thisRun);
  for (const row of rows) facts.add(row);
  yield pageHead(facts, options);
  const data = new EmbeddedData(options);
  for (const row of rows) {
    const piece = data.add(row);
    if (piece !== undefined) yield piece;
  }
  yield data.end();
  yield PAGE_TAIL;
}

/**
 * The page in pieces: the markup first (made from the rows' counts: `counted`, or a first pass over
 * the rows), then the jobs' data a piece at a time from a second pass, so that a folder of 100,000
 * jobs is never one string in memory, nor (read from the store) 100,000 rows.
 */
async function* htmlReportPieces(
  rows: ReportRows,
  options: HtmlReportOptions,
  counted: PageFacts | undefined,
): AsyncGenerator<string> {
  let facts = counted;
  if (facts === undefined) {
    facts = new PageFacts(options.thisRun);
    for await (const row of rows) facts.add(row);
  }
  yield pageHead(facts, options);
  const data = new EmbeddedData(options);
  for await (const row of rows) {
    const piece = data.add(row);
    if (piece !== undefined) yield piece;
  }
  yield data.end();
  yield PAGE_TAIL;
}

/**
 * Writes `OUT/index.html` whole or not at all, so a page open in a browser is never half-written.
 * `counted`: the rows' facts, counted by a pass that read them already (folder-reports.ts), so that
 * they are read once here. @defaultValue counted here, in a pass of its own
 */
export async function writeHtmlReport(
  outDir: string,
  rows: ReportRows,
  options: HtmlReportOptions = {},
  counted?: PageFacts,
): Promise<void> {
  await writeFileAtomic(join(outDir, REPORT_NAME), htmlReportPieces(rows, { outDir, ...options }, counted));
}
