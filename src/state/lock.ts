// One process per state file: two runners on one file could both submit the same job. The lock is a
// file holding the owner's pid, created exclusively; a lock left by a dead process (kill -9) is
// taken over, since the dead cannot submit anything.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { ReelError } from "../errors.js";

export class StateLockedError extends ReelError {
  constructor(path: string, pid: number) {
    super(
      "E_STATE_LOCKED",
      `another reel process (pid ${pid}) is using the state file ${path}. Wait for it to finish or stop it; two runners on one state file could pay twice for the same job.`,
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
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        release: () => {
          try {
            if (readFileSync(lockPath, "utf8").trim() === String(process.pid)) unlinkSync(lockPath);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(lockPath, "utf8").trim());
    } catch {
      continue; // released meanwhile
    }
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw new StateLockedError(statePath, owner);
    }
    try {
      unlinkSync(lockPath); // stale: its owner is gone
    } catch {
      // another process took it over first; try again
    }
  }
  throw new ReelError("E_STATE_LOCKED", `could not lock the state file ${statePath}`);
}
