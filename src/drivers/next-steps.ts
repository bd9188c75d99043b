// What a person does next after a run, as data: the run's summary prints each step's text, and
// `--json` gives the same steps by code so a script can branch on them: the words a user reads and
// the codes a script reads cannot drift apart. The steps for failed jobs, which the report's banner
// says too, are advice/failure-steps.ts's.
import { describeStop } from "../budget/index.js";
import type { RunSummary } from "./run-summary.js";
import { failureSteps, keyOf, type NextStep } from "../advice/failure-steps.js";

export type { NextStep, NextStepCode } from "../advice/failure-steps.js";

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
 * Stops whose error message ends with its own advice (errors/service.ts), which the next step gives
 * again: the summary shows the service's words alone beside the step.
 */
export const ADVISED_STOPS: ReadonlySet<string> = new Set(["E_AUTH", "E_CREDITS"]);

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
  // A job with its video on disk calls for no step: those without are all the steps read.
  steps.push(...failureSteps(summary.notDone, summary.maxAttempts));
  const uncertain = summary.notDone.filter((row) => row.state === "uncertain");
  if (uncertain.length > 0) {
    steps.push({
      code: "RESUBMIT_UNCERTAIN",
      text: "Uncertain: a paid request (the submission, or speech it needs) may have reached the service without an answer, so reel does not send it again by itself. Check the service's console; rerun with --resubmit-uncertain to send it again (it may then be paid twice).",
      jobs: uncertain.map(keyOf),
    });
  }
  const undownloaded = summary.notDone.filter((row) => row.state === "Success" && row.file === null);
  if (undownloaded.length > 0) {
    steps.push({
      code: "RERUN_TO_DOWNLOAD",
      text: "Generated but not downloaded: rerun the same command to download them (nothing is generated again).",
      jobs: undownloaded.map(keyOf),
    });
  }
  return steps;
}
