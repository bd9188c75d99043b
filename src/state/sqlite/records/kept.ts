// What the state file keeps besides the jobs: what reel learned of the service (sql/learned.ts), the
// manifests of each output folder (sql/out-manifests.ts), the caches of local files (sql/caches.ts).
import type { LearnedRecords, OutputRecords, LocalCaches } from "../../job-store.js";
import { methodsOn, type SqlContext } from "../sql/context.js";
import * as caches from "../sql/caches.js";
import * as learned from "../sql/learned.js";
import * as outputs from "../sql/out-manifests.js";

export function keptRecords(c: SqlContext): LearnedRecords & OutputRecords & LocalCaches {
  const on = methodsOn(c);
  return {
    readRunTimes: on(learned.readRunTimes),
    writeRunTimes: on(learned.writeRunTimes),

    recordOutManifest: on(outputs.recordOutManifest),
    outManifests: on(outputs.outManifests),
    forgetOutManifest: on(outputs.forgetOutManifest),

    findFileHash: on(caches.findFileHash),
    recordFileHash: on(caches.recordFileHash),
    findRemote: on(caches.findRemote),
    recordRemote: on(caches.recordRemote),
  };
}
