// What the shared store keeps besides the jobs: what the runners learned of the service
// (sql/learned.ts), the manifests of each output folder (sql/out-manifests.ts), the caches of local
// files of this host (sql/caches.ts).
import type { FileStamp, LearnedRecords, OutputRecords, LocalCaches } from "../../job-store.js";
import type { PgSide } from "./side.js";
import * as caches from "../sql/caches.js";
import * as learned from "../sql/learned.js";
import * as outputs from "../sql/out-manifests.js";

export function keptRecords(s: PgSide): LearnedRecords & OutputRecords & LocalCaches {
  return {
    readRunTimes(): Promise<string | undefined> {
      return s.io(() => learned.readRunTimes(s.c));
    },
    writeRunTimes(data: string): Promise<void> {
      return s.io(() => learned.writeRunTimes(s.c, data));
    },

    recordOutManifest(outDir: string, manifest: string): Promise<void> {
      return s.io(() => outputs.recordOutManifest(s.c, outDir, manifest));
    },
    outManifests(outDir: string): Promise<string[]> {
      return s.io(() => outputs.outManifests(s.c, outDir));
    },
    forgetOutManifest(outDir: string, manifest: string): Promise<boolean> {
      return s.io(() => outputs.forgetOutManifest(s.c, outDir, manifest));
    },

    findFileHash(path: string, stamp: FileStamp): Promise<string | undefined> {
      return s.io(() => caches.findFileHash(s.c, path, stamp));
    },
    recordFileHash(path: string, stamp: FileStamp, sha256: string): Promise<void> {
      return s.io(() => caches.recordFileHash(s.c, path, stamp, sha256));
    },
    findRemote(url: string): Promise<{ sha256: string; path: string; size: number } | undefined> {
      return s.io(() => caches.findRemote(s.c, url));
    },
    recordRemote(url: string, sha256: string, path: string, size: number): Promise<void> {
      return s.io(() => caches.recordRemote(s.c, url, sha256, path, size));
    },
  };
}
