// What a caller tells the page: the run or watch that wrote it, and how to write it.
import type { DecisionRow } from "../state/job-store.js";

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
