// Whether a job that is not in flight is (re)submitted now: a pending one is; a failure only with
// --retry-failed, within its attempts and the budget; an uncertain one with --resubmit-uncertain,
// or once its speech, the only doubt, is known. A retry returns the job to pending by
// compare-and-set, never by writing over what was read.
import type { Job } from "../manifest/index.js";
import type { JobRow } from "../state/job-store.js";
import type { EngineContext } from "./context.js";
import { isSpeechDoubt, noSpeechInDoubt } from "./speech-doubt.js";
import { claimLost } from "./submit-ends.js";
import { plural } from "../plural.js";

/**
 * Whether a job that is not in flight should be (re)submitted now. `row` was read before: a retry
 * returns the job to pending by compare-and-set (markPending), never by writing over what was read.
 */
export async function mayStart(ctx: EngineContext, row: JobRow, job: Job): Promise<boolean> {
  const { store, options, progress, budget } = ctx;
  // A retry past a capped run's budget is not made pending: pending, the next run would send it
  // without being asked to retry.
  const affordable = async (): Promise<boolean> =>
    !budget || (await budget.check(job.key, budget.videoCost(job), ctx.signals.stop.signal));
  switch (row.state) {
    case "pending":
      return true;
    case "Fail":
    case "Canceled":
      if (row.fail_kind === "local") return true; // nothing was sent: free to try again
      // Once per run (per watch session): a watcher reads a manifest again at every save, and each
      // save must not spend another paid attempt on the same failing video.
      if (options.retryFailed && !ctx.retried.has(row.id)) {
        if (row.attempts < options.maxAttempts) {
          if (!(await affordable())) return false;
          ctx.retried.add(row.id);
          if (await store.markPending(row.id, "--retry-failed")) return true;
          await claimLost(ctx, row.id);
          return false;
        }
        // Else --retry-failed would seem to do nothing, as if the service kept failing.
        progress.event({
          stage: "note",
          key: row.job_key,
          detail: `not retried: ${row.attempts} of ${plural(options.maxAttempts, "attempt")} used (--max-attempts N allows more)`,
        });
      }
      return false;
    case "uncertain":
      // In doubt for its speech alone, which is in doubt no longer: nothing of it was ever sent, so
      // it goes as a pending job does, with no flag (see speech-doubt.ts).
      if (
        isSpeechDoubt(row) &&
        (await noSpeechInDoubt(job, (voiceId, text) => store.findSpeech(voiceId, text)))
      ) {
        if (await store.markPending(row.id, "its speech is known")) {
          progress.event({
            stage: "note",
            key: row.job_key,
            detail: "its speech is recorded now, and nothing of this video was sent: it is sent now",
          });
          return true;
        }
        // Another runner of a fleet made it pending first: the claim, a compare-and-set, decides
        // which one sends it.
        if (await ctx.coordinator.madePendingElsewhere(row.id)) return true;
        await claimLost(ctx, row.id);
        return false;
      }
      if (options.resubmitUncertain && (await affordable())) {
        if (await store.markPending(row.id, "--resubmit-uncertain")) return true;
        await claimLost(ctx, row.id);
      }
      return false;
    default:
      return false;
  }
}
