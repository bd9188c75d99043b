// Caches of this machine, not scoped by service: hashes of local files by their stamp, and remote
// sources fetched into the cache folder.
import type { FileStamp } from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";

export function findFileHash(c: SqlContext, path: string, stamp: FileStamp): string | undefined {
  const row = sql(
    c,
    "SELECT sha256 FROM file_hashes WHERE path = ? AND size = ? AND mtime_ns = ? AND ctime_ns = ? AND ino = ?",
  ).get(path, stamp.size, stamp.mtimeNs, stamp.ctimeNs, stamp.ino) as { sha256: string } | undefined;
  return row?.sha256;
}

export function recordFileHash(c: SqlContext, path: string, stamp: FileStamp, sha256: string): void {
  c.turn.write(() =>
    sql(
      c,
      `INSERT INTO file_hashes (path, size, mtime_ns, ctime_ns, ino, sha256) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
           ctime_ns = excluded.ctime_ns, ino = excluded.ino, sha256 = excluded.sha256`,
    ).run(path, stamp.size, stamp.mtimeNs, stamp.ctimeNs, stamp.ino, sha256),
  );
}

export function findRemote(
  c: SqlContext,
  url: string,
): { sha256: string; path: string; size: number } | undefined {
  return sql(c, "SELECT sha256, path, size FROM remote_files WHERE url = ?").get(url) as
    { sha256: string; path: string; size: number } | undefined;
}

export function recordRemote(c: SqlContext, url: string, sha256: string, path: string, size: number): void {
  c.turn.write(() =>
    sql(
      c,
      `INSERT INTO remote_files (url, sha256, path, size) VALUES (?, ?, ?, ?)
         ON CONFLICT (url) DO UPDATE SET sha256 = excluded.sha256, path = excluded.path, size = excluded.size`,
    ).run(url, sha256, path, size),
  );
}
