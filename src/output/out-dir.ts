// Guards of the output folder, taken before anything is paid for: one reel writes into a folder at a
// time (an OS lock), and each folder is proven writable by writing a file into it.
import { closeSync, constants, fstatSync, fsyncSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { flockSync } from "fs-ext";
import { ReelError } from "../errors/reel-error.js";
import { systemReason, tempPathFor } from "./atomic-write.js";
import { OUT_LOCK_NAME } from "./layout.js";

export interface OutDirLock {
  /** Lets another reel use the folder (the process's exit does the same). */
  release(): void;
}

/**
 * Locks `outDir` for this process with flock(2) (`shared`: with the other runners of a shared store,
 * which keep apart by the store's claims, while a reel with a state file is still kept out), held until `release` or the process ends (kill -9
 * included: the kernel drops it). A second reel writing into the same folder with another state file
 * would clean away this one's partial downloads as "stale" and overwrite its videos (and pay for them
 * again): it is refused before it sends anything. The lock is on the file itself, so every path to
 * the folder (symlinks, bind mounts) meets the same lock. A file system without flock (some network
 * ones) runs unlocked, as reel did before.
 */
export function lockOutDir(outDir: string, { shared = false } = {}): OutDirLock {
  const path = join(outDir, OUT_LOCK_NAME);
  let fd: number;
  try {
    // O_NOFOLLOW: never through a symlink planted at the lock's name.
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    throw notWritable(outDir, error);
  }
  try {
    if (!fstatSync(fd).isFile()) throw notWritable(outDir, new Error(`${OUT_LOCK_NAME} is not a file`));
    flockSync(fd, shared ? "shnb" : "exnb");
  } catch (error) {
    closeSync(fd);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EAGAIN" || code === "EWOULDBLOCK") {
      throw new ReelError(
        "E_OUT_LOCKED",
        shared
          ? `a reel process with a state file of its own is writing into the output folder ${outDir}. Wait for it to finish, or give this run another --out: the runners of a shared store share a folder only with one another. Nothing was sent.`
          : `another reel process is writing into the output folder ${outDir} (with another state file, or a shared store). Wait for it to finish, or give this run another --out: two runners on one output folder would overwrite each other's videos and delete each other's downloads in progress. Nothing was sent.`,
      );
    }
    if (code === "ENOLCK" || code === "EOPNOTSUPP" || code === "ENOSYS") return { release() {} };
    throw error;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      closeSync(fd); // closing the only descriptor drops the lock
    },
  };
}

/**
 * Proves `dir` writable by creating, writing, syncing and removing a file in it: a folder that
 * exists but refuses writes (permissions, a read-only mount, a full disk) is found before anything is
 * paid for, not when the first paid video cannot be saved. The file has a temp name, so a run killed
 * between its creation and removal leaves one that the next run cleans (removeStaleTempFiles).
 */
export function probeWritable(dir: string): void {
  const probe = tempPathFor(join(dir, "reel-probe"));
  let fd: number | undefined;
  try {
    fd = openSync(probe, "wx", 0o644);
    writeSync(fd, "reel\n");
    fsyncSync(fd);
  } catch (error) {
    throw notWritable(dir, error);
  } finally {
    if (fd !== undefined) {
      closeSync(fd);
      try {
        unlinkSync(probe);
      } catch {
        // never created
      }
    }
  }
}

function notWritable(dir: string, error: unknown): ReelError {
  return new ReelError(
    "E_OUTPUT_PATH",
    `cannot write into the output folder ${dir} (${systemReason(error)}). Make it writable (permissions, a read-only disk, free space), or point --out elsewhere, then rerun; nothing was sent.`,
    { cause: error },
  );
}
