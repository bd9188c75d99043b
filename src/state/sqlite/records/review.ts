// Reviewers' decisions and retakes on the state file (ReviewRecords: sql/decisions.ts, sql/retakes.ts,
// sql/change-mark.ts).
import type { ReviewRecords } from "../../job-store.js";
import { methodsOn, type SqlContext } from "../sql/context.js";
import * as changeMarks from "../sql/change-mark.js";
import * as decisions from "../sql/decisions.js";
import * as retakes from "../sql/retakes.js";

export function reviewRecords(c: SqlContext): ReviewRecords {
  const on = methodsOn(c);
  return {
    // A reviewer's writes resolve once committed: another process (the run that sends a retake, the
    // page of another reviewer) sees them then; a withdrawal is forced to disk, as an intent is.
    async recordDecisions(list) {
      return c.turn.committed(() => decisions.recordDecisions(c, list));
    },
    latestDecisions: on(decisions.latestDecisions),
    decisionHistory: on(decisions.decisionHistory),

    async queueRetake(request) {
      return c.turn.committed(() => retakes.queueRetake(c, request));
    },
    async withdrawRetake(key) {
      return c.turn.committed(() => retakes.withdrawRetake(c, key));
    },

    listRetakes: on(retakes.listRetakes),
    changeMark: on(changeMarks.changeMark),
  };
}
