// The banner at the top of the page: how the run (or watch) ended and what to do next.
import { DEFAULTS } from "../defaults.js";
import { plural } from "../plural.js";
import { failureSteps } from "../advice/failure-steps.js";
import type { JobRow } from "../state/job-store.js";
import { escapeHtml } from "./escape-html.js";
import type { ReportRun } from "./report-options.js";
import type { ReportSummary } from "./report-summary.js";

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
export function bannerOf(run: ReportRun, summary: ReportSummary, failed: readonly JobRow[]): Banner {
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

export function renderBanner(banner: Banner): string {
  const parts = [`<strong>${escapeHtml(banner.title)}</strong>`];
  if (banner.detail) parts.push(`<span class="detail">${escapeHtml(banner.detail)}</span>`);
  if (banner.next) parts.push(`<span class="next">${escapeHtml(banner.next)}</span>`);
  const role = banner.kind === "stop" ? "alert" : "status";
  return `<section id="banner" class="banner b-${banner.kind}" role="${role}">${parts.join(" ")}</section>`;
}
