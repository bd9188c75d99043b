// The log file of a `run` or `watch` session, under the state folder: opened before anything else,
// cut into parts by size, and the logs of earlier runs pruned once the store is open.
import { mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { DEFAULTS } from "../defaults.js";
import { UsageError } from "../errors/usage.js";
import type { Logger } from "../log/logger.js";
import { pruneLogs } from "../log/log-files.js";
import { RotatingFile } from "../log/rotating-file.js";
import { systemReason } from "../output/atomic-write.js";
import type { CliIO } from "./command.js";
import { positiveInteger } from "./service-options.js";

/**
 * The run's log file, opened here, synchronously: pino flushes it when the process exits, which
 * throws ("sonic boom is not ready yet") if the file is still being opened by then, or never opened.
 * It is cut into parts by size (DEFAULTS.logs, REEL_LOG_PART_BYTES), so a watch's log stays bounded.
 */
export function openLogFile(path: string, env: CliIO["env"]): RotatingFile {
  const partRaw = env.REEL_LOG_PART_BYTES;
  const partBytes =
    partRaw === undefined || partRaw === ""
      ? DEFAULTS.logs.partBytes
      : positiveInteger("REEL_LOG_PART_BYTES", partRaw);
  let fd: number;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, "a", 0o600);
  } catch (error) {
    throw new UsageError(
      `cannot write the log file ${path} beside the state file (${systemReason(error)}). Point --state at a file in a folder you can write.`,
    );
  }
  return new RotatingFile({ path, partBytes, partsKept: DEFAULTS.logs.partsKept }, fd);
}

/**
 * The logs of earlier runs past DEFAULTS.logs deleted, those of reels still running left alone.
 * Once the store is open: until then, they are what shows a lost state file (recovery.ts).
 */
export function pruneEarlierLogs(logFile: string, logger: Logger): void {
  const deleted = pruneLogs(dirname(logFile), DEFAULTS.logs);
  if (deleted.length > 0) logger.info({ deleted: deleted.length }, "old logs deleted");
}
