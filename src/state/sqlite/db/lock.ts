// One process per state file: two runners on one file could both submit the same job. The lock is
// the kernel's: flock(2) on a descriptor of the state database itself, held for the store's life.
// - It belongs to the file, not to a path: a hard link, a symlink or a bind mount reaches the same
//   inode and so the same lock.
// - It needs no judgement of whether its owner lives: the kernel drops it when the owner's
//   descriptor closes, and a process that dies (kill -9, a crash) closes them all. A pid is
//   meaningless across PID namespaces (two containers on one volume), so it is never the judge.
// - On Linux, flock locks are independent of the fcntl locks SQLite takes on the same file.
//   Caveats: NFS emulates flock with fcntl locks (SQLite's WAL mode needs a local file anyway), and
//   the descriptor must outlive SQLite's connection: closing any descriptor of a file drops every
//   fcntl lock the process holds on it (POSIX), so `release` runs after the database is closed.
// Beside the file, `<state>.lock` names the holder for the message a second reel prints. It keeps the
// form reels before 0.2 wrote and judged ("pid boot start-time"), so that an older reel started on a
// file a newer one holds still refuses; and a newer reel refuses a file whose `.lock` names an older
// reel still running (one that holds no flock). That is the only use of a pid here.
import { closeSync, fstatSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { flockSync } from "fs-ext";
import { ReelError } from "../../../errors/reel-error.js";
import { StateLockedError } from "../../../errors/state.js";
import { bootId } from "../../pid-space.js";

export interface StateLock {
  /** Drops the lock. Call once the database connection is closed (see above). */
  release(): void;
}

/**
 * Locks the state file at `path` (created empty if missing) for this process, or throws
 * StateLockedError naming the holder as far as its `.lock` file says.
 */
export function acquireLock(path: string): StateLock {
  // O_CREAT without O_EXCL: two reels creating the file at once open the same inode.
  const fd = openSync(path, "a+", 0o644);
  try {
    flockSync(fd, "exnb");
  } catch (error) {
    const ino = fstatSync(fd).ino;
    closeSync(fd);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EAGAIN" || code === "EWOULDBLOCK") throw new StateLockedError(path, holderOf(path, ino));
    throw error;
  }
  // SQLite names its write-ahead log after the path, not the file: two names of one state file
  // each keep their own -wal, so a run through one name misses what a run killed through the other
  // recorded (and paid for), and the two logs can damage the file. One file, one name.
  const links = fstatSync(fd).nlink;
  if (links > 1) {
    closeSync(fd);
    throw new ReelError(
      "E_STATE_FILE",
      `the state file ${path} has ${links} names (hard links). SQLite keeps its log of recent changes beside each name, so a run through one name would miss what was recorded through another, and pay again. Remove the other names (find / -xdev -samefile ${path}) and keep this one.`,
    );
  }
  const info = `${path}.lock`;
  const older = readOwner(info);
  if (older && older.pid !== process.pid && ownerRuns(older)) {
    closeSync(fd);
    throw new StateLockedError(path, `pid ${older.pid}, an earlier version of reel`);
  }
  const line = `${process.pid} ${bootId()} ${startTime("self")}\n`;
  try {
    writeFileSync(info, line);
  } catch {
    // Information only: a folder that refuses it does not stop the run.
  }
  let held = true;
  return {
    release: () => {
      if (!held) return;
      held = false;
      try {
        if (readFileSync(info, "utf8") === line) unlinkSync(info);
      } catch {
        // already gone
      }
      closeSync(fd); // drops the flock
    },
  };
}

/**
 * "pid N": the kernel's list of locks (Linux) names the holder of the flock on inode `ino` as this
 * process sees it, whatever path it took; else the holder's `.lock` file at this path, whose pid is
 * as the holder saw itself (another PID namespace may number it differently).
 */
function holderOf(path: string, ino: number): string | undefined {
  try {
    for (const line of readFileSync("/proc/locks", "utf8").split("\n")) {
      // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
      const fields = line.trim().split(/\s+/);
      if (fields[1] !== "FLOCK" || fields[5]?.split(":")[2] !== String(ino)) continue;
      const pid = Number(fields[4]);
      if (pid > 0 && pid !== process.pid) return `pid ${pid}`;
    }
  } catch {
    // not Linux
  }
  const owner = readOwner(`${path}.lock`);
  return owner ? `pid ${owner.pid}, from its lock file` : undefined;
}

interface Owner {
  readonly pid: number;
  readonly boot: string;
  readonly start: string;
}

/** What a `.lock` file holds: "pid boot start" (the oldest reels wrote the pid alone). */
function readOwner(info: string): Owner | undefined {
  let text: string;
  try {
    text = readFileSync(info, "utf8");
  } catch {
    return undefined;
  }
  const [pid = "", boot = "", start = ""] = text.trim().split(" ");
  return /^\d+$/.test(pid) ? { pid: Number(pid), boot, start } : undefined;
}

/** Whether the process that wrote a `.lock` runs still (not merely its pid in use), in this namespace. */
function ownerRuns(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const boot = bootId();
  if (owner.boot !== "" && boot !== "" && owner.boot !== boot) return false; // rebooted since
  if (owner.start !== "") {
    const now = startTime(owner.pid);
    if (now !== "" && now !== owner.start) return false; // the pid was given to another process
  }
  return true;
}

/** When process `pid` started, in clock ticks since boot (Linux), or "" where it cannot be read. */
function startTime(pid: number | "self"): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: starttime is field 22.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}
