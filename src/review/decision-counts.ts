// Decisions counted per manifest, as `status` shows them: what a team still has to look at.
import type { JobRow, RetakeRow } from "../state/job-store.js";
import type { DecisionFields } from "../output/decision-fields.js";

/**
 * approved and rejected: takes whose latest decision is that; undecided: takes with a video and no
 * decision (a take without one cannot be chosen: failed or not made yet); retakesQueued: retakes
 * not sent yet (reel retake).
 */
export interface DecisionCounts {
  approved: number;
  rejected: number;
  undecided: number;
  retakesQueued: number;
}

/** Counts per manifest, in the order the manifests first appear. */
export function countDecisions(
  jobs: readonly { readonly row: JobRow; readonly fields: DecisionFields }[],
  retakes: readonly RetakeRow[],
): Record<string, DecisionCounts> {
  const counts: Record<string, DecisionCounts> = {};
  const of = (manifest: string): DecisionCounts =>
    (counts[manifest] ??= { approved: 0, rejected: 0, undecided: 0, retakesQueued: 0 });
  for (const { row, fields } of jobs) {
    const own = of(row.manifest);
    if (fields.decision !== null) own[fields.decision]++;
    else if (row.state === "Success") own.undecided++;
  }
  for (const retake of retakes) if (retake.state === "queued") of(retake.manifest).retakesQueued++;
  return counts;
}
