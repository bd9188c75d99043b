// What the shared store keeps besides the jobs: what the runners learned of the service
// (sql/learned.ts), the manifests of each output folder (sql/out-manifests.ts), the caches of local
// files of this host (sql/caches.ts).
import type { LearnedRecords, OutputRecords, LocalCaches } from "../../job-store.js";
import type { PgSide } from "./side.js";
import * as caches from "../sql/caches.js";
import * as learned from "../sql/learned.js";
import * as outputs from "../sql/out-manifests.js";

export function keptRecords(s: PgSide): LearnedRecords & OutputRecords & LocalCaches {
  return {
    readRunTimes() {
      return s.io(() => learned.readRunTimes(s.c));
    },
    writeRunTimes(data) {
      return s.io(() => learned.writeRunTimes(s.c, data));
    },

    recordOutManifest(outDir, manifest) {
      return s.io(() => outputs.recordOutManifest(s.c, outDir, manifest));
    },
    outManifests(outDir) {
      return s.io(() => outputs.outManifests(s.c, outDir));
    },
    forgetOutManifest(outDir, manifest) {
      return s.io(() => outputs.forgetOutManifest(s.c, outDir, manifest));
    },

    findFileHash(path, stamp) {
      return s.io(() => caches.findFileHash(s.c, path, stamp));
    },
    recordFileHash(path, stamp, sha256) {
      return s.io(() => caches.recordFileHash(s.c, path, stamp, sha256));
    },
    findRemote(url) {
      return s.io(() => caches.findRemote(s.c, url));
    },
    recordRemote(url, sha256, path, size) {
      return s.io(() => caches.recordRemote(s.c, url, sha256, path, size));
    },
  };
}
