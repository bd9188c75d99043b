// One process per state file: two runners on one file could both submit the same job. The lock is a
// file holding the owner's pid, created exclusively; a lock left by a dead process (kill -9) is
// taken over, since the dead cannot submit anything.
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { ReelError } from "../errors.js";

export class StateLockedError extends ReelError {
  constructor(path: string, pid: number) {
    super(
      "E_STATE_LOCKED",
      `another reel process (pid ${pid}) is using the state file ${path}. Wait for it to finish or stop it; two runners on one state file could pay twice for the same job. If no reel is running (the pid now belongs to another program, say after a reboot), delete ${path}.lock.`,
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

export function acquireLock(statePath: string): StateLock {
  const lockPath = `${statePath}.lock`;
  for (let tries = 0; tries < 20; tries++) {
    // The pid is written to a private file first and linked into place, so the lock file never
    // exists without its pid (another process reading it empty could take it for stale).
    const temp = `${lockPath}.${process.pid}.${tries}`;
    writeFileSync(temp, `${process.pid}\n`);
    try {
      linkSync(temp, lockPath);
      return ownLock(lockPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(temp);
    }
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(lockPath, "utf8").trim());
    } catch {
      continue; // released meanwhile
    }
    if (!Number.isInteger(owner) || owner <= 0) {
      sleepSync(50); // written by an older reel without the link: give it a moment
      continue;
    }
    if (owner !== process.pid && isAlive(owner)) throw new StateLockedError(statePath, owner);
    // Stale: its owner is gone (kill -9, a crash). Take it over by renaming our own pid file onto
    // it: rename replaces atomically, so two processes taking over cannot both win.
    const claim = `${lockPath}.${process.pid}.claim`;
    writeFileSync(claim, `${process.pid}\n`);
    renameSync(claim, lockPath);
    sleepSync(20);
    if (readFileSync(lockPath, "utf8").trim() === String(process.pid)) {
      return ownLock(lockPath);
    }
  }
  throw new ReelError("E_STATE_LOCKED", `could not lock the state file ${statePath}; try again`);
}

function ownLock(lockPath: string): StateLock {
  return {
    release: () => {
      try {
        if (readFileSync(lockPath, "utf8").trim() === String(process.pid)) unlinkSync(lockPath);
      } catch {
        // already gone
      }
    },
  };
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
