// Reviewers' decisions and retakes on the state file (ReviewRecords: sql/decisions.ts, sql/retakes.ts,
// sql/change-mark.ts).
import type { DecisionRow, NewDecision, RetakeRequest, RetakeRow, ReviewRecords } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as changeMarks from "../sql/change-mark.js";
import * as decisions from "../sql/decisions.js";
import * as retakes from "../sql/retakes.js";

export function reviewRecords(c: SqlContext): ReviewRecords {
  return {
    // A reviewer's writes resolve once committed: another process (the run that sends a retake, the
    // page of another reviewer) sees them then; a withdrawal is forced to disk, as an intent is.
    async recordDecisions(list: readonly NewDecision[]): Promise<DecisionRow[]> {
      return c.turn.committed(() => decisions.recordDecisions(c, list));
    },
    async latestDecisions(
      versions?: readonly { readonly key: string; readonly specHash: string }[],
    ): Promise<DecisionRow[]> {
      return decisions.latestDecisions(c, versions);
    },
    async decisionHistory(key: string, specHash: string): Promise<DecisionRow[]> {
      return decisions.decisionHistory(c, key, specHash);
    },

    async queueRetake(request: RetakeRequest): Promise<RetakeRow> {
      return c.turn.committed(() => retakes.queueRetake(c, request));
    },
    async withdrawRetake(key: string): Promise<"withdrawn" | "sent" | "none"> {
      return c.turn.committed(() => retakes.withdrawRetake(c, key));
    },

    async listRetakes(manifests?: readonly string[]): Promise<RetakeRow[]> {
      return retakes.listRetakes(c, manifests);
    },
    async changeMark(): Promise<string> {
      return changeMarks.changeMark(c);
    },
  };
}
