// One process per state file: two runners on one file could both submit the same job. The lock is a
// file holding the owner's pid, created exclusively; a lock left by a dead process (kill -9) is
// taken over, since the dead cannot submit anything. Where /proc exists, the lock also names the
// boot and the owner's start time, so a pid that now belongs to another program (after a reboot,
// or reused) is not taken for a running reel.
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { ReelError } from "../errors.js";

export class StateLockedError extends ReelError {
  constructor(path: string, pid: number) {
    super(
      "E_STATE_LOCKED",
      `another reel process (pid ${pid}) is using the state file ${path}. Wait for it to finish or stop it; two runners on one state file could pay twice for the same job. If you are sure no reel is running, delete ${path}.lock.`,
    );
  }
}

export interface StateLock {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

let thisBoot: string | undefined;

/** This boot's id (Linux), or "" where the system does not say; read once per process. */
function bootId(): string {
  if (thisBoot === undefined) {
    try {
      thisBoot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      thisBoot = "";
    }
  }
  return thisBoot;
}

/** When process `pid` started, in clock ticks since boot (Linux), or "" where it cannot be read. */
function startTime(pid: number | "self"): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces: state is field 3,
    // starttime field 22.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** What a lock file holds: "pid boot start" (older reels wrote the pid alone). */
function ownerLine(): string {
  return `${process.pid} ${bootId()} ${startTime("self")}\n`;
}

interface Owner {
  readonly pid: number;
  readonly boot: string;
  readonly start: string;
}

function parseOwner(text: string): Owner {
  const [pid = "", boot = "", start = ""] = text.trim().split(" ");
  return { pid: Number(pid), boot, start };
}

/** Whether the process that wrote the lock is still running (not merely its pid in use). */
function ownerRuns(owner: Owner): boolean {
  if (!isAlive(owner.pid)) return false;
  const boot = bootId();
  if (owner.boot !== "" && boot !== "" && owner.boot !== boot) return false; // rebooted since
  if (owner.start !== "") {
    const now = startTime(owner.pid);
    if (now !== "" && now !== owner.start) return false; // the pid was given to another process
  }
  return true;
}

export function acquireLock(statePath: string): StateLock {
  const lockPath = `${statePath}.lock`;
  for (let tries = 0; tries < 20; tries++) {
    // The pid is written to a private file first and linked into place, so the lock file never
    // exists without its pid (another process reading it empty could take it for stale).
    const temp = `${lockPath}.${process.pid}.${tries}`;
    writeFileSync(temp, ownerLine());
    try {
      linkSync(temp, lockPath);
      return ownLock(lockPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(temp);
    }
    let owner: Owner;
    try {
      owner = parseOwner(readFileSync(lockPath, "utf8"));
    } catch {
      continue; // released meanwhile
    }
    if (!Number.isInteger(owner.pid) || owner.pid <= 0) {
      sleepSync(50); // written by an older reel without the link: give it a moment
      continue;
    }
    if (owner.pid !== process.pid && ownerRuns(owner)) throw new StateLockedError(statePath, owner.pid);
    // Stale: its owner is gone (kill -9, a crash, a reboot). Take it over by renaming our own pid
    // file onto it: rename replaces atomically, so two processes taking over cannot both win.
    const claim = `${lockPath}.${process.pid}.claim`;
    writeFileSync(claim, ownerLine());
    renameSync(claim, lockPath);
    sleepSync(20);
    if (parseOwner(readFileSync(lockPath, "utf8")).pid === process.pid) {
      return ownLock(lockPath);
    }
  }
  throw new ReelError("E_STATE_LOCKED", `could not lock the state file ${statePath}; try again`);
}

function ownLock(lockPath: string): StateLock {
  return {
    release: () => {
      try {
        if (parseOwner(readFileSync(lockPath, "utf8")).pid === process.pid) unlinkSync(lockPath);
      } catch {
        // already gone
      }
    },
  };
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
