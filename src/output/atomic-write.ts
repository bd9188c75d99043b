// Output files appear whole or not at all: written to an exclusive temp file beside the target, then
// renamed over it. `wx` refuses to open through anything planted at the temp name (a symlink
// included), and rename replaces a directory entry without following a symlink at the target.
import { randomUUID } from "node:crypto";
import { closeSync, openSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ReelError } from "../errors/reel-error.js";
import { OutputDiskError } from "../errors/output.js";

export function tempPathFor(target: string): string {
  // randomUUID draws from a cached pool of random bytes: cheaper than randomBytes per file.
  return join(dirname(target), `.${basename(target)}.${randomUUID().slice(-12)}.part`);
}

/**
 * Creates `dir` (and parents) and refuses a symlink planted in its place. `mayBeLink`: the output
 * folder the user named may itself be a link (to a bigger disk); the folders reel makes inside it
 * may not.
 */
export async function ensureRealDir(dir: string, { mayBeLink = false } = {}): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    // EEXIST (a file there), ENOENT (a dangling symlink), ENOTDIR, EACCES, EROFS...
    const info = await lstat(dir).catch(() => undefined);
    if (info && !info.isDirectory()) throw notAFolder(dir, info.isSymbolicLink());
    throw new ReelError(
      "E_OUTPUT_PATH",
      `cannot create the output folder ${dir} (${systemReason(error)}). Check --out and the permissions of the folders above it.`,
      { cause: error },
    );
  }
  const info = await (mayBeLink ? stat : lstat)(dir);
  if (!info.isDirectory()) throw notAFolder(dir, info.isSymbolicLink());
}

/** "EACCES: permission denied", from Node's "EACCES: permission denied, mkdir '/x'". */
export function systemReason(error: unknown): string {
  return ((error as Error).message ?? String(error)).split(", ")[0]!;
}

/** What each disk failure means, said in the user's words. */
const DISK_FAILURES: Readonly<Record<string, string>> = {
  ENOSPC: "the disk is full",
  EDQUOT: "your disk quota is used up",
  EROFS: "the disk is read-only",
  EIO: "the disk reported an input/output error",
};

/**
 * `error` as an OutputDiskError when the disk under `dir` refused a write for a reason that holds
 * for every other file too (full, over quota, read-only, failing); otherwise undefined. The one
 * place that decides which file system errors stop the work.
 */
export function asDiskFailure(error: unknown, dir: string): OutputDiskError | undefined {
  if (error instanceof OutputDiskError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const meaning = code === undefined ? undefined : DISK_FAILURES[code];
  if (meaning === undefined) return undefined;
  return new OutputDiskError(
    `cannot write into ${dir}: ${meaning} (${systemReason(error)}). reel stopped; nothing is lost: every task already paid for is kept in the state file. Free some space (or fix the disk), then rerun the same command: the videos are fetched again, never generated again.`,
    { cause: error },
  );
}

function notAFolder(dir: string, symlink: boolean): ReelError {
  return new ReelError(
    "E_OUTPUT_PATH",
    `${dir} is ${symlink ? "a symbolic link" : "not a folder"}; reel writes only into real folders under the output folder. Remove it, or point --out elsewhere, and rerun.`,
  );
}

/**
 * Writes `target` whole or not at all. Its folder must exist (see ensureRealDir). `sync` flushes the
 * data to disk before the rename, so a power cut cannot leave an empty file under the final name;
 * files that are rewritten from the state file anyway can skip it. `data` may come in pieces (a
 * report of 100,000 jobs): each is written as it is made, so the whole never sits in memory and the
 * event loop runs between them.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  options: { readonly sync?: boolean } = {},
): Promise<void> {
  const file = await AtomicFile.open(target);
  try {
    if (typeof data === "string" || data instanceof Uint8Array) await file.write(data);
    else for await (const piece of data) await file.write(piece);
    await file.commit(options.sync ?? true);
  } catch (error) {
    await file.abandon();
    throw error;
  }
}

/**
 * A file written whole or not at all, a piece at a time, by its caller (writeFileAtomic's way, for a
 * writer that feeds several files at once): `commit` puts it in place, `abandon` removes it. Disk
 * failures are thrown as OutputDiskError (asDiskFailure).
 */
export class AtomicFile {
  private closed = false;
  private placed = false;

  private constructor(
    private readonly target: string,
    private readonly temp: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(target: string): Promise<AtomicFile> {
    const temp = tempPathFor(target);
    try {
      return new AtomicFile(target, temp, await open(temp, "wx", 0o644));
    } catch (error) {
      throw asDiskFailure(error, dirname(target)) ?? error;
    }
  }

  /** Writes on from where the last piece ended (and loops over a short write). */
  async write(piece: string | Uint8Array): Promise<void> {
    try {
      await this.handle.writeFile(piece);
    } catch (error) {
      throw asDiskFailure(error, dirname(this.target)) ?? error;
    }
  }

  /** Renames the file into place; `sync`: flushed to disk first (see writeFileAtomic). */
  async commit(sync = true): Promise<void> {
    try {
      if (sync) await this.handle.sync();
      this.closed = true;
      await this.handle.close();
      await rename(this.temp, this.target);
      this.placed = true;
    } catch (error) {
      throw asDiskFailure(error, dirname(this.target)) ?? error;
    }
  }

  /** Removes the file, unless it was put in place. */
  async abandon(): Promise<void> {
    if (this.placed) return;
    // Closed once only: a number closed twice may by then belong to another open file.
    if (!this.closed) await this.handle.close().catch(() => {});
    this.closed = true;
    await unlink(this.temp).catch(() => {});
  }
}

/**
 * writeFileAtomic for a small file (a job's record), without fsync, in synchronous calls: four
 * quick system calls on the main thread cost less than four trips through libuv's thread pool,
 * which a run of 10,000 jobs would make 40,000 times.
 */
export function writeSmallFileAtomicSync(target: string, data: string): void {
  const temp = tempPathFor(target);
  let fd: number;
  try {
    fd = openSync(temp, "wx", 0o644);
  } catch (error) {
    throw asDiskFailure(error, dirname(target)) ?? error;
  }
  let open = true;
  try {
    writeFileSync(fd, data);
    open = false;
    closeSync(fd);
    renameSync(temp, target);
  } catch (error) {
    // Closed once only: a number closed twice may by then belong to another open file.
    if (open) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // never created, or renamed
    }
    throw asDiskFailure(error, dirname(target)) ?? error;
  }
}

/**
 * Removes the temp files a killed run left in `dir` (only ours: `.<name>.<hex>.part`). `olderThanMs`:
 * only those not written to for that long (a folder shared with live runners, whose downloads in
 * progress are not stale).
 */
export async function removeStaleTempFiles(dir: string, olderThanMs = 0): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let stale = names.filter((n) => /^\..+\.[0-9a-f]{12}\.part$/.test(n));
  if (olderThanMs > 0) {
    const before = Date.now() - olderThanMs;
    const ages = await Promise.all(
      stale.map((n) =>
        stat(join(dir, n)).then(
          (s) => s.mtimeMs,
          () => Infinity,
        ),
      ),
    );
    stale = stale.filter((_, i) => ages[i]! < before);
  }
  await Promise.all(stale.map((n) => unlink(join(dir, n)).catch(() => {})));
  return stale.length;
}
