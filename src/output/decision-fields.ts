// A take's decision as every output carries it: each job's record, results.jsonl, `status --json`
// and index.html. Undecided (never decided, or the decision cleared): all four null.
import type { DecisionRow, Verdict } from "../state/job-store.js";
import { isoTime } from "./iso-time.js";

export interface DecisionFields {
  readonly decision: Verdict | null;
  readonly reviewer: string | null;
  /** ISO 8601. */
  readonly decidedAt: string | null;
  readonly note: string | null;
}

export const UNDECIDED: DecisionFields = { decision: null, reviewer: null, decidedAt: null, note: null };

/** The fields of a version whose latest decision is `row` (undefined: none). */
export function decisionFieldsOf(row: DecisionRow | undefined): DecisionFields {
  if (row === undefined || row.decision === "cleared") return UNDECIDED;
  return {
    decision: row.decision,
    reviewer: row.reviewer,
    decidedAt: isoTime(row.decidedAt),
    note: row.note,
  };
}

/** Whether two sets of fields say the same (a record to write again when they do not). */
export function sameDecision(a: DecisionFields, b: DecisionFields): boolean {
  return (
    a.decision === b.decision && a.reviewer === b.reviewer && a.decidedAt === b.decidedAt && a.note === b.note
  );
}
