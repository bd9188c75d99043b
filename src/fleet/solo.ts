// One runner at a time on a state file (its lock keeps out another reel): nobody else claims its
// jobs or slots, and the only other runner is an earlier one that stopped. Its work is sorted at the
// start from the journal of submissions in the output folder; a claim or an intent another writer
// won is another process on the same state file, an oddity the engine says.
import { readJournal } from "../output/journal.js";
import { checkJournal, lostCommitsMessage } from "../output/recovery.js";
import type { JobStore } from "../state/job-store.js";
import { StateFileError } from "../errors/state.js";
import { agree, plural } from "../plural.js";
import type {
  Coordination,
  Coordinator,
  FleetTelling,
  IntentCoordination,
  SlotLine,
} from "./coordination.js";

/** Nobody waits in line: the engine's own queue bounds its generations. */
const NO_LINE: SlotLine = {
  size: 0,
  wait: () => Promise.resolve("stop"),
  claimed() {},
  freed() {},
};

/** No other runner holds an intent: one another writer won is an error, one left is an earlier run's. */
export const SOLO_INTENTS: IntentCoordination = {
  takeOverSilent: () => Promise.resolve(),
  otherRunnerWon: () => false,
  // An earlier run's call cut off: uncertain (see engine/assets.ts).
  speechUnderWay: () => false,
  dropsUploadIntent: (mayHaveStored) => !mayHaveStored,
};

export function soloCoordination(store: JobStore): Coordination {
  return {
    output: { shared: false, staleTempMs: 0 },
    showFleet: () => () => {},
    attach: ({ progress }) => soloCoordinator(store, progress),
  };
}

function soloCoordinator(store: JobStore, progress: FleetTelling): Coordinator {
  return {
    ...SOLO_INTENTS,
    takeOverStopped: (outDir) => resumeInterrupted(store, outDir, progress),
    start() {},
    takeUp: () => Promise.resolve(true),
    untilLetGo: () => Promise.resolve(),
    followTask: () => Promise.resolve(true),
    // A row gone (JobGoneError) is said by the engine: a retake withdrawn meanwhile?
    claim: async (rowId, charge) => (await store.markSubmitting(rowId, charge)) ?? "lost",
    madePendingElsewhere: () => Promise.resolve(false),
    sendDelay: () => undefined,
    slots: NO_LINE,
    dispose() {},
  };
}

/**
 * Sorts the work an interrupted run left in the state file, checked against the journal of
 * submissions in `outDir`. Throws StateFileError when the state file lost commits the journal shows.
 * Its reads and the writes that follow them are not interleaved with any job: makeEngine awaits it
 * before its queues exist. Another process is kept out by the state file's lock.
 */
async function resumeInterrupted(store: JobStore, outDir: string, progress: FleetTelling): Promise<void> {
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
