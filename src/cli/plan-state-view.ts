// What `reel plan` needs to know from the state file, read-only: which jobs are done, in flight or
// failed, which contents are uploaded and which speech exists, for one service.
import type { JobStatus, PlanStateView } from "../manifest/index.js";
import { resolve } from "node:path";
import { videoFile } from "../output/layout.js";
import { keptName } from "../output/versions.js";
import type { StateStore } from "../state/store.js";

export function makePlanStateView(store: StateStore, outDir: string): PlanStateView {
  let made: Map<string, string> | undefined;
  const outKey = resolve(outDir);
  return {
    madeAs: (specHash) => (made ??= store.madeSpecs()).get(specHash),
    replacedAs(key, specHash) {
      const slash = key.indexOf("/");
      const [manifest, id] = [key.slice(0, slash), key.slice(slash + 1)];
      const older = store
        .listJobsWithFile(key, videoFile(manifest, id), outKey)
        .find((row) => row.spec_hash !== specHash);
      return older && keptName({ store, outDir, outKey }, older);
    },
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
