// Reviewers' decisions and retakes on the shared store (ReviewRecords: sql/decisions.ts,
// sql/retakes.ts, sql/change-mark.ts).
import type { DecisionRow, NewDecision, RetakeRequest, RetakeRow, ReviewRecords } from "../../job-store.js";
import type { PgSide } from "./side.js";
import * as changeMarks from "../sql/change-mark.js";
import * as decisions from "../sql/decisions.js";
import * as retakes from "../sql/retakes.js";

export function reviewRecords(s: PgSide): ReviewRecords {
  return {
    recordDecisions(list: readonly NewDecision[]): Promise<DecisionRow[]> {
      return s.io(() => decisions.recordDecisions(s.c, list));
    },
    latestDecisions(
      versions?: readonly { readonly key: string; readonly specHash: string }[],
    ): Promise<DecisionRow[]> {
      return s.io(() => decisions.latestDecisions(s.c, versions));
    },
    decisionHistory(key: string, specHash: string): Promise<DecisionRow[]> {
      return s.io(() => decisions.decisionHistory(s.c, key, specHash));
    },

    queueRetake(request: RetakeRequest): Promise<RetakeRow> {
      return s.io(() => retakes.queueRetake(s.c, request));
    },
    withdrawRetake(key: string): Promise<"withdrawn" | "sent" | "none"> {
      return s.io(() => retakes.withdrawRetake(s.c, key));
    },
    listRetakes(manifests?: readonly string[]): Promise<RetakeRow[]> {
      return s.io(() => retakes.listRetakes(s.c, manifests));
    },
    changeMark(): Promise<string> {
      return s.io(() => changeMarks.changeMark(s.c));
    },
  };
}
