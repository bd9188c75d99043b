// What a person does next after a run, as data: the run's summary prints each step's text, `--json`
// gives the same steps by code so a script can branch on them, and the report's banner says the
// same of failed jobs. One place for the advice, so the words a user reads and the codes a script
// reads cannot drift apart. Each step names what would change the outcome: advice to do what would
// send nothing (--retry-failed on a job that used every attempt) would only send the user round.
import { describeStop } from "../budget/index.js";
import { plural, agree } from "../plural.js";
import { INJECTED_FAILURE_REASON } from "../sandbox/options.js";
import type { JobRow } from "../state/store.js";
import type { RunSummary } from "./run-batch.js";

export type NextStepCode =
  | "FIX_OR_RETRY_FAILED"
  | "EDIT_FAILED"
  | "EDIT_REFUSED"
  | "FIX_AND_RERUN"
  | "SANDBOX_FAILURE"
  | "RESUBMIT_UNCERTAIN"
  | "RERUN_TO_DOWNLOAD"
  | "RERUN_TO_RESUME"
  | "RERUN_TO_FINISH"
  | "RAISE_BUDGET"
  | "FIX_KEY"
  | "ADD_CREDITS"
  | "CHECK_SERVICE"
  | "FREE_DISK";

export interface NextStep {
  readonly code: NextStepCode;
  readonly text: string;
  /** The jobs (`manifest/id`) it is about, when it is about some. */
  readonly jobs?: readonly string[];
}

const keyOf = (row: JobRow): string => `${row.manifest}/${row.video_id}`;

/**
 * How a stopped run ended, in a few words for the summary's first line (`stopped: out of credits`);
 * `--json` keeps the outcome `fatal` and gives the code.
 */
export function stopCause(code: string): string {
  switch (code) {
    case "E_CREDITS":
      return "out of credits";
    case "E_AUTH":
      return "the service refused the API key";
    case "E_OUTPUT_DISK":
      return "the output folder's disk refused a write";
    default:
      return "the service could not be used";
  }
}

/**
 * Stops whose error message ends with its own advice (client/errors.ts), which the next step gives
 * again: the summary shows the service's words alone beside the step.
 */
export const ADVISED_STOPS: ReadonlySet<string> = new Set(["E_AUTH", "E_CREDITS"]);

/**
 * Why a job failed, as far as the next step goes: `local`, before anything was sent (tried again by
 * itself); `sandbox`, on purpose by the sandbox's --fail-rate; `refused`, the service refused the
 * request as sent (the same request gets the same answer); `exhausted`, on the service, with every
 * attempt allowed used; `retry`, on the service, with attempts left.
 */
export type FailureKind = "local" | "sandbox" | "refused" | "exhausted" | "retry";

export function failureKind(row: JobRow, maxAttempts: number): FailureKind | undefined {
  if (row.state !== "Fail" && row.state !== "Canceled") return undefined;
  if (row.fail_kind === "local") return "local";
  if (row.error?.includes(INJECTED_FAILURE_REASON)) return "sandbox";
  if (row.fail_kind === "rejected") return "refused";
  return row.attempts >= maxAttempts ? "exhausted" : "retry";
}

/**
 * The steps for the failed jobs of `rows`: one per kind of failure, with the jobs it is about.
 * `again`: how the user goes on, "rerun" after a run, "start the watch again" after a watch.
 */
export function failureSteps(rows: readonly JobRow[], maxAttempts: number, again = "rerun"): NextStep[] {
  const byKind = new Map<FailureKind, JobRow[]>();
  for (const row of rows) {
    const kind = failureKind(row, maxAttempts);
    if (kind !== undefined) byKind.set(kind, [...(byKind.get(kind) ?? []), row]);
  }
  const steps: NextStep[] = [];
  const step = (kind: FailureKind, code: NextStepCode, text: (n: number, them: string) => string): void => {
    const jobs = byKind.get(kind);
    if (!jobs) return;
    steps.push({ code, text: text(jobs.length, agree(jobs.length, "it", "them")), jobs: jobs.map(keyOf) });
  };
  const used = `${maxAttempts} of ${maxAttempts} used`;
  step(
    "retry",
    "FIX_OR_RETRY_FAILED",
    (n, them) =>
      `${plural(n, "job")} failed with attempts left (${plural(maxAttempts, "attempt")} allowed per job): ${again} with --retry-failed to try ${them} again (a new, paid attempt), or edit ${them} in the manifest (a changed video is a new job).`,
  );
  step(
    "exhausted",
    "EDIT_FAILED",
    (n, them) =>
      `${plural(n, "job")} failed on every attempt allowed (${used}): running again does not send ${them} again; edit ${them} in the manifest (a changed video is a new job).`,
  );
  step(
    "refused",
    "EDIT_REFUSED",
    (n, them) =>
      `${plural(n, "job")} ${agree(n, "was", "were")} refused by the service as sent (see the error): the same request gets the same answer, so edit ${them} in the manifest.`,
  );
  step(
    "local",
    "FIX_AND_RERUN",
    (n, them) =>
      `${plural(n, "job")} failed before anything was sent (nothing was paid): fix what the error says, then ${again}; ${them} ${agree(n, "is", "are")} tried again without being asked.`,
  );
  const injected = byKind.get("sandbox") ?? [];
  const spent = injected.filter((row) => row.attempts >= maxAttempts).length;
  step(
    "sandbox",
    "SANDBOX_FAILURE",
    (n, them) =>
      `${plural(n, "job")} failed on purpose: the sandbox's --fail-rate fails tasks, whatever the video, and the same request again under one --seed. Restart the sandbox without --fail-rate (or with another --seed), then ${again} with --retry-failed to make ${them}${spent > 0 ? `, and a --max-attempts above ${maxAttempts} for the ${plural(spent, "job")} that used all ${maxAttempts}` : ""}.`,
  );
  return steps;
}

/** The steps that apply after a run that ended as `summary` says. */
export function nextSteps(summary: RunSummary): NextStep[] {
  const steps: NextStep[] = [];
  const fatalCode = summary.fatal?.code;
  if (fatalCode === "E_AUTH") {
    steps.push({
      code: "FIX_KEY",
      text: "The service refused the API key: set the right one in REEL_API_KEY and rerun the same command. Nothing was lost; nothing is paid twice.",
    });
  } else if (fatalCode === "E_CREDITS") {
    steps.push({
      code: "ADD_CREDITS",
      text: "The account is out of credits: add credits in the service's console, then rerun the same command. Tasks already paid for are followed; nothing is paid twice.",
    });
  } else if (fatalCode === "E_OUTPUT_DISK") {
    steps.push({
      code: "FREE_DISK",
      text: "The output folder's disk refused a write: free space (or fix the disk), then rerun the same command. Generated videos are downloaded again from their tasks, not generated again.",
    });
  } else if (fatalCode !== undefined) {
    steps.push({
      code: "CHECK_SERVICE",
      text: "The service could not be used (see above): check the address (--base-url) and the service's status, then rerun the same command.",
    });
  }
  if (summary.outcome === "interrupted") {
    steps.push({
      code: "RERUN_TO_RESUME",
      text: "Interrupted: tasks already submitted keep running on the service; rerun the same command to resume (nothing is submitted twice).",
    });
  }
  if (summary.outcome === "capped" && summary.budget) {
    steps.push({ code: "RAISE_BUDGET", text: describeStop(summary.budget.budget, summary.budget.left) });
  }
  if (summary.outcome === "incomplete") {
    steps.push({
      code: "RERUN_TO_FINISH",
      text: "Some jobs are not finished yet; rerun the same command to go on (nothing is submitted twice).",
    });
  }
  steps.push(...failureSteps(summary.rows, summary.maxAttempts));
  const uncertain = summary.rows.filter((row) => row.state === "uncertain");
  if (uncertain.length > 0) {
    steps.push({
      code: "RESUBMIT_UNCERTAIN",
      text: "Uncertain: a paid request (the submission, or speech it needs) may have reached the service without an answer, so reel does not send it again by itself. Check the service's console; rerun with --resubmit-uncertain to send it again (it may then be paid twice).",
      jobs: uncertain.map(keyOf),
    });
  }
  const undownloaded = summary.rows.filter((row) => row.state === "Success" && row.file === null);
  if (undownloaded.length > 0) {
    steps.push({
      code: "RERUN_TO_DOWNLOAD",
      text: "Generated but not downloaded: rerun the same command to download them (nothing is generated again).",
      jobs: undownloaded.map(keyOf),
    });
  }
  return steps;
}
