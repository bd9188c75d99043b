// What a run ended with, as `reel run` prints it, `--json` gives it and the next steps read it: the
// types alone, apart from the driver (run-batch.ts), so that what reads a summary needs no driver.
import type { Budget, Cost } from "../budget/index.js";
import type { ServiceError } from "../errors/service.js";
import type { OutputDiskError } from "../errors/output.js";
import type { DecisionRow, JobRow } from "../state/job-store.js";

export interface RunSummary {
  /** incomplete: not stopped, yet some job is not final (its task outlived --poll-deadline, or the
   * service kept refusing it): a rerun goes on. */
  readonly outcome: "completed" | "incomplete" | "capped" | "fatal" | "interrupted";
  /**
   * The error that stopped the run (rejected key, exhausted credits, a service never reached, the
   * output folder's disk full).
   */
  readonly fatal?: ServiceError | OutputDiskError;
  /** The jobs of the run by status (output/job-record.ts's statusOf), after the run. */
  readonly counts: Readonly<Record<string, number>>;
  /** Per manifest, in the order of its jobs, how many of the run's jobs have their video on disk. */
  readonly videos: ReadonlyMap<string, number>;
  /**
   * The current row of each job of the run without its video on disk (failed, uncertain, unsent, not
   * final, or not downloaded), in the order of the jobs: what the summary names and its next steps
   * read. A run that went well holds none; the others are read from the store (see rows).
   */
  readonly notDone: readonly JobRow[];
  /**
   * The current row of every job of the run, read again from the store at each pass, a batch at a
   * time (100,000 rows held at once were most of a big run's memory): while the store is open.
   */
  readonly rows: AsyncIterable<JobRow>;
  /** The latest decision of each job version of the service, by versionKey, after the run. */
  readonly decisions?: ReadonlyMap<string, DecisionRow>;
  /** A capped run's budget: what it spent, where it stopped (outcome "capped"), what it left unsent. */
  readonly budget?: BudgetEnd;
  /** Attempts a job may have in all (--max-attempts): whether --retry-failed would send a failed one. */
  readonly maxAttempts: number;
}

/** A capped run's end: the budget (caps, spend, why it stopped) and the jobs it did not send. */
export interface BudgetEnd {
  readonly budget: Budget;
  readonly left: { readonly jobs: number; readonly cost: Cost };
}
