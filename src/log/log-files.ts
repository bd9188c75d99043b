// The log files of `run` and `watch` in the state folder's `logs/`: their names, and the pruning of
// those of reels no longer running. A name carries the process id of the reel writing it
// (`watch-<time>-<pid>.log`, its earlier parts `watch-<time>-<pid>.1.log`, `.2.log`...): that is how
// a reel starting beside others (a fleet's runners on one machine, a watch beside a run) knows which
// logs are still being written, and leaves them alone.
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

/** The log of a `kind` started at `startedAt` by the process `pid`. */
export function logFileName(kind: "run" | "watch", startedAt: Date, pid: number): string {
  return `${kind}-${startedAt.toISOString().replace(/[:.]/g, "-")}-${pid}.log`;
}

/** The `n`th earlier part of the log at `path` (1: the newest). */
export function logPartPath(path: string, n: number): string {
  return `${path.slice(0, -".log".length)}.${n}.log`;
}

/**
 * reel's log names, today's and those of versions before the pid was in them (no pid: only their
 * age tells whether they are in use). Any other file in the folder is not reel's to delete.
 */
const LOG_NAME = /^(?:run|watch)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z(?:-(\d+))?(?:\.\d+)?\.log$/;

export interface LogPruning {
  /** Logs older than this (by their last write) are deleted. */
  readonly keepMs: number;
  /** At most this many logs are kept, the newest. */
  readonly keptFiles: number;
  /** At most this many bytes of logs are kept, the newest first. */
  readonly keptBytes: number;
  /** A log written this recently is never deleted (a reel of another machine may write it). */
  readonly inUseMs: number;
}

/**
 * Deletes in `dir` the logs past `rules` whose reel is not running (on this machine, by the pid in
 * the name). The logs in use are neither deleted nor counted: their reels bound them as they write.
 * Returns the paths deleted. A file that cannot be read or deleted is left, silently.
 */
export function pruneLogs(
  dir: string,
  rules: LogPruning,
  now = Date.now(),
  isRunning: (pid: number) => boolean = processIsRunning,
): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no folder yet: nothing to prune
  }
  const candidates: { path: string; size: number; writtenAt: number }[] = [];
  for (const name of names) {
    const match = LOG_NAME.exec(name);
    if (!match) continue;
    const pid = match[1] === undefined ? undefined : Number(match[1]);
    if (pid !== undefined && isRunning(pid)) continue;
    const path = join(dir, name);
    try {
      const stats = statSync(path);
      if (!stats.isFile() || now - stats.mtimeMs < rules.inUseMs) continue;
      candidates.push({ path, size: stats.size, writtenAt: stats.mtimeMs });
    } catch {
      continue; // gone meanwhile (another reel pruning too)
    }
  }
  candidates.sort((a, b) => b.writtenAt - a.writtenAt);
  const deleted: string[] = [];
  let keptFiles = 0;
  let keptBytes = 0;
  let full = false; // once one is past a bound, every older one is too
  for (const log of candidates) {
    full ||=
      now - log.writtenAt >= rules.keepMs ||
      keptFiles >= rules.keptFiles ||
      keptBytes + log.size > rules.keptBytes;
    if (!full) {
      keptFiles++;
      keptBytes += log.size;
      continue;
    }
    try {
      rmSync(log.path, { force: true });
      deleted.push(log.path);
    } catch {
      // Kept for the next start to try again.
    }
  }
  return deleted;
}

/** Whether a process of this id runs on this machine (one of another user's counts: EPERM). */
export function processIsRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
