// What an engine does with the output folder before any job starts, and after the last: the folder
// is locked, cleaned of dead runs' temp files, and its journal opened; at the end, the journal is
// compacted and the folder unlocked. (The work a stopped run left is sorted before: fleet/.)
import type { Logger } from "../log/logger.js";
import { asDiskFailure, ensureRealDir, removeStaleTempFiles } from "../output/atomic-write.js";
import type { OutputHolding } from "../fleet/coordination.js";
import {
  compactJournal,
  type JournalScope,
  type JournalWriter,
  NO_JOURNAL,
  openJournal,
} from "../output/journal.js";
import { lockOutDir, probeWritable } from "../output/out-dir.js";
import type { JobStore } from "../state/job-store.js";

/** The output folder, held by one engine (see openOutput). */
export interface OpenOutput {
  readonly journal: JournalWriter;
  /** Closes the journal, compacts it, and unlocks the folder. */
  close(store: JobStore, log: Logger): Promise<void>;
}

/**
 * Makes, locks and checks the output folder, and opens its journal for `scope`'s lines. `shared`:
 * the runners of a fleet (a shared store) share the folder; they take its lock shared, so that a
 * reel with a state file is still kept out, keep no journal (their store cannot lose a commit),
 * and clean only temp files older than `staleTempMs`.
 */
export async function openOutput(
  outDir: string,
  scope: JournalScope,
  { shared, staleTempMs }: OutputHolding,
): Promise<OpenOutput> {
  await ensureRealDir(outDir, { mayBeLink: true });
  // Held until close: from here on, temp files in the folder are this engine's own or a dead run's.
  const outLock = lockOutDir(outDir, { shared });
  let journal: JournalWriter;
  try {
    probeWritable(outDir);
    await removeStaleTempFiles(outDir, staleTempMs);
    journal = shared ? NO_JOURNAL : openJournal(outDir, scope);
  } catch (error) {
    outLock.release();
    throw asDiskFailure(error, outDir) ?? error;
  }
  return {
    journal,
    async close(store, log) {
      journal.close();
      if (shared) {
        outLock.release();
        return;
      }
      // Still under the folder's lock: no other reel appends meanwhile.
      await store.flush();
      if (!store.writeFailure) {
        try {
          await compactJournal(outDir, scope, async (manifest, id, specHash, attempt) => {
            const head = await store.versionHead(`${manifest}/${id}`, specHash);
            // Final, and its record written: the records hold it now.
            return (
              head !== undefined &&
              head.attempts >= attempt &&
              ((head.state === "Success" && head.file !== null) ||
                head.state === "Fail" ||
                head.state === "Canceled")
            );
          });
        } catch (error) {
          log.warn({ err: (error as Error).message }, "could not compact the journal; kept as it is");
        }
      }
      outLock.release();
    },
  };
}
