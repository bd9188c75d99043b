// What the state file keeps besides the jobs: what reel learned of the service (sql/learned.ts), the
// manifests of each output folder (sql/out-manifests.ts), the caches of local files (sql/caches.ts).
import type { FileStamp, LearnedRecords, OutputRecords, LocalCaches } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as caches from "../sql/caches.js";
import * as learned from "../sql/learned.js";
import * as outputs from "../sql/out-manifests.js";

export function keptRecords(c: SqlContext): LearnedRecords & OutputRecords & LocalCaches {
  return {
    async readRunTimes(): Promise<string | undefined> {
      return learned.readRunTimes(c);
    },
    async writeRunTimes(data: string): Promise<void> {
      learned.writeRunTimes(c, data);
    },

    async recordOutManifest(outDir: string, manifest: string): Promise<void> {
      outputs.recordOutManifest(c, outDir, manifest);
    },
    async outManifests(outDir: string): Promise<string[]> {
      return outputs.outManifests(c, outDir);
    },
    async forgetOutManifest(outDir: string, manifest: string): Promise<boolean> {
      return outputs.forgetOutManifest(c, outDir, manifest);
    },

    async findFileHash(path: string, stamp: FileStamp): Promise<string | undefined> {
      return caches.findFileHash(c, path, stamp);
    },
    async recordFileHash(path: string, stamp: FileStamp, sha256: string): Promise<void> {
      caches.recordFileHash(c, path, stamp, sha256);
    },
    async findRemote(url: string): Promise<{ sha256: string; path: string; size: number } | undefined> {
      return caches.findRemote(c, url);
    },
    async recordRemote(url: string, sha256: string, path: string, size: number): Promise<void> {
      caches.recordRemote(c, url, sha256, path, size);
    },
  };
}
