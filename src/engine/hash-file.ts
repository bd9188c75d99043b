// Content hashes of local files, streamed (never read whole) and cached by (path, size, mtime, ctime,
// inode) in the state file, so a rerun over unchanged files reads none of them.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import type { StateStore } from "../state/store.js";

/** 1 MiB reads: few enough syscalls that hashing runs at the speed of SHA-256 itself. */
const READ_CHUNK = 1 << 20;

/**
 * A file whose timestamp is this close to the moment it was looked at could be edited again within
 * the same timestamp tick (2 s on FAT, coarse on some network file systems) without its size or
 * mtime changing: its hash is used but not cached, so the next run reads it again (git treats its
 * "racily clean" index entries the same way). Otherwise a stale hash would name the old content's
 * asset, and the user would pay for a video of the wrong file.
 */
const RACY_MS = 2_000;

export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path, { highWaterMark: READ_CHUNK }), hash);
  return hash.digest("hex");
}

export interface CachedHasher {
  (absPath: string): Promise<string>;
  /** Files actually read (cache misses) since creation. */
  readonly stats: { hashed: number; cached: number };
}

export function makeCachedHasher(store: StateStore): CachedHasher {
  const stats = { hashed: 0, cached: 0 };
  const inFlight = new Map<string, Promise<string>>();
  const hasher = async (absPath: string): Promise<string> => {
    const pending = inFlight.get(absPath);
    if (pending) return pending;
    const work = (async () => {
      const lookedAt = Date.now();
      const info = await stat(absPath, { bigint: true });
      const stamp = {
        size: Number(info.size),
        mtimeNs: info.mtimeNs.toString(),
        ctimeNs: info.ctimeNs.toString(),
        ino: info.ino.toString(),
      };
      const known = store.findFileHash(absPath, stamp);
      if (known) {
        stats.cached++;
        return known;
      }
      const sha = await sha256File(absPath);
      stats.hashed++;
      if (lookedAt - Number(info.mtimeMs) >= RACY_MS) store.recordFileHash(absPath, stamp, sha);
      return sha;
    })();
    inFlight.set(absPath, work);
    try {
      return await work;
    } finally {
      inFlight.delete(absPath);
    }
  };
  return Object.assign(hasher, { stats });
}
