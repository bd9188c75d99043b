// Reviewers' decisions and retakes on the shared store (ReviewRecords: sql/decisions.ts,
// sql/retakes.ts, sql/change-mark.ts).
import type { ReviewRecords } from "../../job-store.js";
import type { PgSide } from "./side.js";
import * as changeMarks from "../sql/change-mark.js";
import * as decisions from "../sql/decisions.js";
import * as retakes from "../sql/retakes.js";

export function reviewRecords(s: PgSide): ReviewRecords {
  return {
    recordDecisions(list) {
      return s.io(() => decisions.recordDecisions(s.c, list));
    },
    latestDecisions(versions) {
      return s.io(() => decisions.latestDecisions(s.c, versions));
    },
    decisionHistory(key, specHash) {
      return s.io(() => decisions.decisionHistory(s.c, key, specHash));
    },

    queueRetake(request) {
      return s.io(() => retakes.queueRetake(s.c, request));
    },
    withdrawRetake(key) {
      return s.io(() => retakes.withdrawRetake(s.c, key));
    },
    listRetakes(manifests) {
      return s.io(() => retakes.listRetakes(s.c, manifests));
    },
    changeMark() {
      return s.io(() => changeMarks.changeMark(s.c));
    },
  };
}
