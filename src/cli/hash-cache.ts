// `run` validates its manifests before it locks the state file, opens a log or starts the sandbox:
// an invalid manifest is refused (exit 2) even while another reel holds the state file. Loading
// hashes the media files, through the cache of hashes kept in the store; here that cache is read
// without the lock (SQLite readers never wait on a writer), and the hashes computed meanwhile are
// written into the store once it is locked. A shared store (PostgreSQL) keeps each machine's hashes
// apart (by host: a path means nothing on another machine), read here through a reader of its own,
// which registers no runner and never waits on a migration (the run's own store brings the schema
// up, and rides out a store that goes away meanwhile). A cache that cannot be read (no state file yet, another program's file,
// an older schema, a database that does not answer) only means the files are hashed again.
import { type CachedHasher, type HashCache, makeCachedHasher } from "../engine/cached-file-hash.js";
import { openJobStore } from "../state/open-job-store.js";
import type { FileStamp, JobStore } from "../state/job-store.js";

export interface UnlockedHashCache {
  readonly hasher: CachedHasher;
  /** Stops reading the state file (before it is opened to write). */
  closeReader(): Promise<void>;
  /** Writes the hashes computed since into `store`, now locked. */
  saveTo(store: JobStore): Promise<void>;
}

export async function readHashCacheUnlocked(
  statePath: string,
  storeUrl?: string,
): Promise<UnlockedHashCache> {
  // Opened at the first file to hash: manifests of text alone open no reader (on a PostgreSQL
  // store, one connection fewer at every runner's start).
  let reader: Promise<JobStore | undefined> | undefined;
  let closed = false;
  const open = (): Promise<JobStore | undefined> =>
    (reader ??= openJobStore(statePath, { readonly: true, withoutMigrating: true }, storeUrl).catch(
      () => undefined, // hashed again: see above
    ));
  const computed: [path: string, stamp: FileStamp, sha256: string][] = [];
  const cache: HashCache = {
    async findFileHash(path, stamp) {
      if (closed) return undefined;
      try {
        return await (await open())?.findFileHash(path, stamp);
      } catch {
        return undefined;
      }
    },
    async recordFileHash(path, stamp, sha256) {
      computed.push([path, stamp, sha256]);
    },
  };
  return {
    hasher: makeCachedHasher(cache),
    async closeReader() {
      closed = true;
      await (await reader)?.close();
    },
    async saveTo(store) {
      for (const [path, stamp, sha256] of computed.splice(0)) await store.recordFileHash(path, stamp, sha256);
    },
  };
}
