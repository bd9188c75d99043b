// What the store keeps besides the jobs: what reel learned of the service, the manifests of each
// output folder, and the caches of this machine.

/** What reel learned of the service, scoped by service (engine/run-times.ts). */
export interface LearnedRecords {
  /** The learned run times as last written (RunTimes.toJSON), if any. */
  readRunTimes(): Promise<string | undefined>;
  /** Replaces them: the last writer wins (runners of a fleet each write what they learned). */
  writeRunTimes(data: string): Promise<void>;
}

/**
 * The manifests run into each output folder (not scoped by service: the folder holds what any service
 * made), by the folder's absolute path: its reports (results.jsonl, index.html) list every video of
 * them, not only the last run's.
 */
export interface OutputRecords {
  /** `manifest` is run into the output folder `outDir`: its videos are the folder's from now on. */
  recordOutManifest(outDir: string, manifest: string): Promise<void>;
  /** The manifests recorded for `outDir`, by name. */
  outManifests(outDir: string): Promise<string[]>;
  /**
   * Drops `manifest` from `outDir`'s list (`reel forget`): false when it was not in it. Its jobs are
   * kept (the record of what was paid); a run of it adds it again.
   */
  forgetOutManifest(outDir: string, manifest: string): Promise<boolean>;
}

/** What tells a file's content apart without reading it (see migration 5). */
export interface FileStamp {
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  readonly ino: string;
}

/** Caches of this machine (not scoped by service): hashes of local files, fetched remote sources. */
export interface LocalCaches {
  findFileHash(path: string, stamp: FileStamp): Promise<string | undefined>;
  recordFileHash(path: string, stamp: FileStamp, sha256: string): Promise<void>;
  findRemote(url: string): Promise<{ sha256: string; path: string; size: number } | undefined>;
  recordRemote(url: string, sha256: string, path: string, size: number): Promise<void>;
}
