// Caches of one machine, not scoped by service but by host: hashes of local files by their stamp, and
// remote sources fetched into the cache folder. A path means nothing on another machine of the fleet.
import type { FileStamp } from "../../job-store.js";
import { type PgContext, toNumber } from "./context.js";

export async function findFileHash(
  c: PgContext,
  path: string,
  stamp: FileStamp,
): Promise<string | undefined> {
  const { rows } = await c.pool.query<{ sha256: string }>(
    "SELECT sha256 FROM file_hashes WHERE host = $1 AND path = $2 AND size = $3 AND mtime_ns = $4 AND ctime_ns = $5 AND ino = $6",
    [c.host, path, stamp.size, stamp.mtimeNs, stamp.ctimeNs, stamp.ino],
  );
  return rows[0]?.sha256;
}

export async function recordFileHash(
  c: PgContext,
  path: string,
  stamp: FileStamp,
  sha256: string,
): Promise<void> {
  await c.pool.query(
    `INSERT INTO file_hashes (host, path, size, mtime_ns, ctime_ns, ino, sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (host, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
         ctime_ns = excluded.ctime_ns, ino = excluded.ino, sha256 = excluded.sha256`,
    [c.host, path, stamp.size, stamp.mtimeNs, stamp.ctimeNs, stamp.ino, sha256],
  );
}

export async function findRemote(
  c: PgContext,
  url: string,
): Promise<{ sha256: string; path: string; size: number } | undefined> {
  const { rows } = await c.pool.query<{ sha256: string; path: string; size: string }>(
    "SELECT sha256, path, size FROM remote_files WHERE host = $1 AND url = $2",
    [c.host, url],
  );
  const row = rows[0];
  return row && { sha256: row.sha256, path: row.path, size: toNumber(row.size) };
}

export async function recordRemote(
  c: PgContext,
  url: string,
  sha256: string,
  path: string,
  size: number,
): Promise<void> {
  await c.pool.query(
    `INSERT INTO remote_files (host, url, sha256, path, size) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (host, url) DO UPDATE SET sha256 = excluded.sha256, path = excluded.path, size = excluded.size`,
    [c.host, url, sha256, path, size],
  );
}
