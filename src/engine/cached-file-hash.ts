// Content hashes of local files, streamed (never read whole) and cached by (path, size, mtime, ctime,
// inode) in the state file, so a rerun over unchanged files reads none of them.
import { sha256OfOpened } from "../sha256.js";
import type { OpenedFile } from "../manifest/validate/media-file.js";
import type { JobStore } from "../state/job-store.js";
import { type ProgressSink, silentProgress } from "./progress.js";

/**
 * A file whose timestamp is this close to the moment it was looked at could be edited again within
 * the same timestamp tick (2 s on FAT, coarse on some network file systems) without its size or
 * mtime changing: its hash is used but not cached, so the next run reads it again (git treats its
 * "racily clean" index entries the same way). Otherwise a stale hash would name the old content's
 * asset, and the user would pay for a video of the wrong file.
 */
const RACY_MS = 2_000;

export interface CachedHasher {
  /** The hash of `opened` (the file at `absPath`), read from the descriptor unless cached. */
  (absPath: string, opened: OpenedFile): Promise<string>;
  /** Files actually read (cache misses) since creation. */
  readonly stats: { hashed: number; cached: number };
}

/** Where hashes are cached: the state file, or a read-only look at it (see cli/hash-cache.ts). */
export type HashCache = Pick<JobStore, "findFileHash" | "recordFileHash">;

/** `progress` is told of each file read (not of those found in the cache). */
export function makeCachedHasher(store: HashCache, progress: ProgressSink = silentProgress): CachedHasher {
  const stats = { hashed: 0, cached: 0 };
  const inFlight = new Map<string, Promise<string>>();
  const hasher = async (absPath: string, opened: OpenedFile): Promise<string> => {
    // Keyed by the file too: another file put at this path meanwhile is another hash.
    const key = `${absPath}\0${opened.stamp.dev}:${opened.stamp.ino}:${opened.stamp.mtimeNs}`;
    // One read of the cache and one hash per file at once: the lookup and the insert below are
    // synchronous, so two callers of one file share `work` even while the store is read.
    const pending = inFlight.get(key);
    if (pending) return pending;
    const work = (async () => {
      const lookedAt = Date.now();
      const { size, mtimeNs, ctimeNs, ino } = opened.stamp;
      const stamp = { size, mtimeNs, ctimeNs, ino };
      const known = await store.findFileHash(absPath, stamp);
      if (known) {
        stats.cached++;
        return known;
      }
      progress.event({ stage: "hashing", asset: absPath, bytes: Number(size) });
      let sha: string;
      try {
        sha = await sha256OfOpened(opened.handle);
      } finally {
        progress.event({ stage: "hashed", asset: absPath });
      }
      stats.hashed++;
      if (lookedAt - Number(BigInt(mtimeNs) / 1_000_000n) >= RACY_MS)
        await store.recordFileHash(absPath, stamp, sha);
      return sha;
    })();
    inFlight.set(key, work);
    try {
      return await work;
    } finally {
      inFlight.delete(key);
    }
  };
  return Object.assign(hasher, { stats });
}
