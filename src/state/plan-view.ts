// What `reel plan` needs to know from the state file, read-only: which jobs are done, in flight or
// failed, which contents are uploaded and which speech exists, for one service.
import type { JobStatus, PlanStateView } from "../manifest/index.js";
import type { StateStore } from "./store.js";

export function makePlanStateView(store: StateStore): PlanStateView {
  let made: Map<string, string> | undefined;
  return {
    madeAs: (specHash) => (made ??= store.madeSpecs()).get(specHash),
    jobStatus(key: string, specHash: string): JobStatus {
      const row = store.findJob(key, specHash);
      switch (row?.state) {
        case undefined:
        case "pending":
          return "new";
        case "Success":
          return "done";
        case "submitting":
        case "submitted":
          return "in-flight";
        case "uncertain":
          return "uncertain";
        case "Fail":
        case "Canceled":
          // Nothing was sent for a local failure: the next run simply tries again.
          return row.fail_kind === "local" ? "new" : "failed";
      }
    },
    assetUploaded: (sha256) => store.findAsset(sha256) !== undefined,
    speechMade: (voiceId, text) => store.findSpeech(voiceId, text)?.state === "done",
  };
}
