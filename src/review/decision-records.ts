// Each job's record (`OUT/<manifest>/<id>.json`) carries its decision. A decision is made in the
// store, by a process that may not see OUT (another machine of a fleet, or a run holding it); the
// run or watch that writes the reports brings the records in line: the end of each run, and each
// write of a watch's reports.
import { join } from "node:path";
import { writeJobRecord } from "../output/job-record.js";
import { recordFile } from "../output/layout.js";
import { readRecordFields } from "../output/records.js";
import { type DecisionRow, type JobRow, versionKey } from "../state/job-store.js";
import { decisionFieldsOf, sameDecision, UNDECIDED } from "../output/decision-fields.js";

/**
 * Writes again the record of each row of `rows` whose record in `outDir` is its own (the same
 * version) and says another decision than `decisions` (by versionKey) holds. Only the records of
 * decided versions are read: one never decided was written undecided. Returns how many were written.
 */
export function writeDecisionRecords(
  outDir: string,
  rows: readonly JobRow[],
  decisions: ReadonlyMap<string, DecisionRow>,
): number {
  let written = 0;
  for (const row of rows) {
    const decision = decisions.get(versionKey(row.job_key, row.spec_hash));
    if (decision === undefined) continue;
    const path = join(outDir, recordFile(row.manifest, row.video_id, row.spec_hash, false));
    const recorded = readRecordFields(path);
    // Missing, or another version's (its video is kept under <id>.mp4 still): not this row's to write.
    if (recorded?.specHash !== row.spec_hash) continue;
    if (sameDecision(recorded.decision ?? UNDECIDED, decisionFieldsOf(decision))) continue;
    writeJobRecord(outDir, row, false, decision);
    written++;
  }
  return written;
}
