// A job left uncertain for its speech alone: the speech call (perhaps paid for) has no recorded
// answer, so the job was not sent, and its own submission was never claimed (FailKind `speech`).
// Once none of its speech is in doubt any more (a runner taken over recorded its late answer, or a
// --resubmit-uncertain run made it again), nothing stands between it and an ordinary submission: it
// goes back to pending and a plain run sends it, with the speech on record, not made again. A job
// whose own submission may have been sent never carries the mark (a claim clears it), so it stays
// uncertain until --resubmit-uncertain.
import type { Job } from "../manifest/index.js";
import type { JobRow, SpeechRow } from "../state/job-store.js";

/** Whether `row` is uncertain for its speech alone (see above). */
export function isSpeechDoubt(row: Pick<JobRow, "state" | "fail_kind">): boolean {
  return row.state === "uncertain" && row.fail_kind === "speech";
}

/**
 * Whether no speech of `job` is in doubt: each made, or (refused for certain since, or lost by the
 * service) not recorded at all, to be made as for a new job. `speechOf` reads the store.
 */
export async function noSpeechInDoubt(
  job: Job,
  speechOf: (voiceId: string, text: string) => Promise<SpeechRow | undefined> | SpeechRow | undefined,
): Promise<boolean> {
  for (const chunk of job.spec.chunks) {
    if (chunk.audio?.kind !== "speech") continue;
    const row = await speechOf(chunk.audio.voiceId, chunk.audio.text);
    if (row !== undefined && row.state !== "done") return false;
  }
  return true;
}

/** The error a job not sent for its speech's doubt records: what a rerun does, with or without the flag. */
export function speechDoubtMessage(speechError: string): string {
  return `${speechError.replace(/\.$/, "")}. Nothing was sent for this video: a plain rerun sends it once that speech is recorded`;
}
