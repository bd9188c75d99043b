// What the state file keeps besides the jobs: what reel learned of the service (sql/learned.ts), the
// manifests of each output folder (sql/out-manifests.ts), the caches of local files (sql/caches.ts).
import type { LearnedRecords, OutputRecords, LocalCaches } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as caches from "../sql/caches.js";
import * as learned from "../sql/learned.js";
import * as outputs from "../sql/out-manifests.js";

export function keptRecords(c: SqlContext): LearnedRecords & OutputRecords & LocalCaches {
  return {
    async readRunTimes() {
      return learned.readRunTimes(c);
    },
    async writeRunTimes(data) {
      learned.writeRunTimes(c, data);
    },

    async recordOutManifest(outDir, manifest) {
      outputs.recordOutManifest(c, outDir, manifest);
    },
    async outManifests(outDir) {
      return outputs.outManifests(c, outDir);
    },
    async forgetOutManifest(outDir, manifest) {
      return outputs.forgetOutManifest(c, outDir, manifest);
    },

    async findFileHash(path, stamp) {
      return caches.findFileHash(c, path, stamp);
    },
    async recordFileHash(path, stamp, sha256) {
      caches.recordFileHash(c, path, stamp, sha256);
    },
    async findRemote(url) {
      return caches.findRemote(c, url);
    },
    async recordRemote(url, sha256, path, size) {
      caches.recordRemote(c, url, sha256, path, size);
    },
  };
}
