// What an engine does with the state file and the output folder before any job starts, and after
// the last: the work an interrupted run left is sorted (answered, uncertain, to upload again), the
// output folder is locked, cleaned of dead runs' temp files, and its journal opened; at the end, the
// journal is compacted and the folder unlocked.
import type { Logger } from "../log/logger.js";
import { asDiskFailure, ensureRealDir, removeStaleTempFiles } from "../output/atomic-write.js";
import {
  compactJournal,
  type JournalScope,
  type JournalWriter,
  NO_JOURNAL,
  openJournal,
  readJournal,
} from "../output/journal.js";
import { lockOutDir, probeWritable } from "../output/out-dir.js";
import { checkJournal, lostCommitsMessage } from "../output/recovery.js";
import { type JobStore, StateFileError } from "../state/job-store.js";
import type { ProgressSink } from "./progress.js";
import { agree, plural } from "../plural.js";

/** The output folder, held by one engine (see openOutput). */
export interface OpenOutput {
  readonly journal: JournalWriter;
  /** Closes the journal, compacts it, and unlocks the folder. */
  close(store: JobStore, log: Logger): Promise<void>;
}

/**
 * Sorts the work an interrupted run left in the state file, checked against the journal of
 * submissions in `outDir`. Throws StateFileError when the state file lost commits the journal shows.
 * Its reads and the writes that follow them are not interleaved with any job: makeEngine awaits it
 * before its queues exist. Another process is kept out by the state file's lock.
 */
export async function resumeInterrupted(
  store: JobStore,
  outDir: string,
  progress: ProgressSink,
): Promise<void> {
  if (store.fleet) {
    // A shared store commits every write before it resolves: it cannot lose what a journal would
    // keep (and several runners share an output folder). What a runner gone left is sorted by the
    // same takeover the runners do as they work: only a gone runner's, never a live one's.
    // Said by the engine's listener (FleetStore.onTakeOver), as every takeover is.
    await store.fleet.takeOverLost();
    return;
  }
  // The journal of submissions in this output folder, read once: entries the state file does not
  // know mean it lost commits, and a rerun on it would pay for them again (see output/journal.ts).
  const journaled = await checkJournal(store, readJournal(outDir, store.journalScope!));
  if (journaled.unknown.length > 0) {
    throw new StateFileError(lostCommitsMessage(store.path, outDir, journaled.unknown));
  }
  // Answers a crash kept from the state file but not from the journal: followed, not uncertain.
  for (const [rowId, taskId] of journaled.answered) {
    const holder = await store.markSubmitted(rowId, taskId);
    // Never followed by two jobs (see TaskIdHeldError): left to become uncertain just below.
    if (holder !== undefined)
      progress.event({
        stage: "note",
        detail: `the journal in ${outDir} kept task ${taskId} for a submission, but ${holder} already holds that task id (a fault of the service): its job is uncertain`,
      });
  }
  if (journaled.answered.length > 0) {
    progress.event({
      stage: "note",
      detail: `${plural(journaled.answered.length, "submission")} of an interrupted run ${agree(journaled.answered.length, "was", "were")} answered (the journal in ${outDir} kept the task id): followed`,
    });
  }
  const interrupted = await store.markInterruptedSubmissionsUncertain();
  if (interrupted > 0) {
    progress.event({
      stage: "note",
      detail: `${plural(interrupted, "submission")} of an interrupted run ${agree(interrupted, "has", "have")} an unknown outcome: marked uncertain`,
    });
  }
  await store.markInterruptedSpeechUncertain();
  const repeatedUploads = await store.takeInterruptedUploads();
  if (repeatedUploads > 0) {
    progress.event({
      stage: "note",
      detail: `${plural(repeatedUploads, "upload")} of an earlier run may have reached the service without an answer; ${agree(repeatedUploads, "it is", "they are")} uploaded again if needed (uploads cost no credits)`,
    });
  }
}

/**
 * Temp files of a runner of a fleet sharing the output folder are left alone unless this old: a
 * download in progress writes to its file all the time, a dead runner's stays as it was.
 */
export const SHARED_STALE_TEMP_MS = 15 * 60_000;

/**
 * Makes, locks and checks the output folder, and opens its journal for `scope`'s lines. `shared`:
 * the runners of a fleet (a shared store) share the folder; they take its lock shared, so that a
 * reel with a state file is still kept out, keep no journal (see resumeInterrupted), and clean only
 * old temp files.
 */
export async function openOutput(
  outDir: string,
  scope: JournalScope,
  { shared = false } = {},
): Promise<OpenOutput> {
  await ensureRealDir(outDir, { mayBeLink: true });
  // Held until close: from here on, temp files in the folder are this engine's own or a dead run's.
  const outLock = lockOutDir(outDir, { shared });
  let journal: JournalWriter;
  try {
    probeWritable(outDir);
    await removeStaleTempFiles(outDir, shared ? SHARED_STALE_TEMP_MS : 0);
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
