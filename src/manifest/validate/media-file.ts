// A media file is opened once, without following a link as its last step, and judged (format,
// content hash) through that one descriptor; the upload opens it again the same way, checks that it
// holds the very file that was judged, and sends the bytes it hashes. Checked by name and read by
// name again, a file could be swapped for a link to another one in between (a link to /etc/passwd,
// planted by anyone who can write in a watched folder), and that file would be uploaded in its place.
import { constants } from "node:fs";
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises";
import type { BigIntStats } from "node:fs";

/** What identifies a file's content without reading it: the same file, not edited since. */
export interface FileStamp {
  readonly dev: string;
  readonly ino: string;
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
}

/** A file opened for reading, and its stamp when it was opened. */
export interface OpenedFile {
  readonly handle: FileHandle;
  readonly stamp: FileStamp;
}

/**
 * O_NOFOLLOW: a link as the last step of the path fails (ELOOP) instead of being followed.
 * O_NONBLOCK: a named pipe put in place of a file must not block the open until a writer comes; it
 * does not change reads of regular files.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Opens `path` for reading without following a link in its last step. */
export function openNoFollow(path: string): Promise<FileHandle> {
  return open(path, OPEN_FLAGS);
}

/** The error of opening a link with openNoFollow (ELOOP on Linux and macOS, EMLINK on FreeBSD). */
export function isLinkRefusal(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ELOOP" || code === "EMLINK";
}

export function stampOf(info: BigIntStats): FileStamp {
  return {
    dev: info.dev.toString(),
    ino: info.ino.toString(),
    size: Number(info.size),
    mtimeNs: info.mtimeNs.toString(),
    ctimeNs: info.ctimeNs.toString(),
  };
}

/** The same file (device and inode), of the same size and modification time. */
export function sameFile(a: FileStamp, b: FileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/**
 * Where the open descriptor really is, to be checked against the allowed folders: a folder on the
 * way to `expected` may have been swapped for a link between its realpath and the open. On Linux the
 * kernel says (/proc/self/fd); elsewhere `expected` is resolved again and must still name this file.
 */
export async function openedPath(opened: OpenedFile, expected: string): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${opened.handle.fd}`);
  } catch {
    // no /proc: fall through
  }
  try {
    if ((await realpath(expected)) !== expected) return undefined;
    const now = stampOf(await stat(expected, { bigint: true }));
    return now.dev === opened.stamp.dev && now.ino === opened.stamp.ino ? expected : undefined;
  } catch {
    return undefined;
  }
}
