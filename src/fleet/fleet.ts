// A runner of a fleet: several runners share one PostgreSQL store (a FleetStore). A job is claimed
// by one runner (a compare-and-set), within the account's bound of unfinished generations across
// the fleet; a runner's lease, confirmed at every heartbeat, fences what it sends; the work of a
// runner gone or silent past its lease is taken over by the others; a slot freed and not used is
// told to them (slot-line.ts), and jobs another runner holds are waited for (elsewhere.ts).
import type { FleetStore, JobStore } from "../state/job-store.js";
import { ClaimLostError, JobGoneError, StateFileError, StoreUnreachableError } from "../errors/state.js";
import type { Coordination, Coordinator, EngineSide } from "./coordination.js";
import { makeElsewhereWaiter } from "./elsewhere.js";
import { pollFleetView } from "./fleet-view.js";
import { noteOutage, noteTakeOver } from "./notes.js";
import { FleetSlots } from "./slot-line.js";

/**
 * Temp files of a runner of a fleet sharing the output folder are left alone unless this old: a
 * download in progress writes to its file all the time, a dead runner's stays as it was.
 */
export const SHARED_STALE_TEMP_MS = 15 * 60_000;

export function fleetCoordination(store: JobStore, fleet: FleetStore): Coordination {
  return {
    // The runners share the output folder (see engine/startup.ts openOutput). A shared store commits
    // every write before it resolves: it cannot lose what a journal would keep.
    output: { shared: true, staleTempMs: SHARED_STALE_TEMP_MS },
    showFleet: (sink) => pollFleetView(fleet, sink),
    attach: (engine) => fleetCoordinator(store, fleet, engine),
  };
}

function fleetCoordinator(store: JobStore, fleet: FleetStore, engine: EngineSide): Coordinator {
  const { stop, progress, log } = engine;
  // The store's listeners cannot be taken back: once disposed, they do nothing.
  let disposed = false;
  // Every takeover that found something is said, whichever part of the work made it.
  const quitTakeOvers = fleet.onTakeOver((found) => noteTakeOver(found, progress));
  // A runner taken over (paused or cut off past its lease) stops: its work is the others' now.
  fleet.onLeaseLost((error) => {
    if (!disposed) engine.stopForState(error);
  });
  fleet.onOutage((event) => {
    if (!disposed) noteOutage(event, progress, log);
  });
  // The jobs waiting for a slot of the account; the slots freed here that none of them takes are told
  // to the other runners, and theirs heard.
  const slots = new FleetSlots(stop, () => fleet.slotFree());
  fleet.onSlotFree((offer) => {
    if (!disposed) slots.offered(offer);
  });
  const elsewhere = makeElsewhereWaiter(fleet, stop, Math.min(1_000, fleet.heartbeatMs), log);

  // Every heartbeat, the work of runners gone silent is taken over, and the tasks no runner follows
  // (theirs, a stopped runner's, a late answer's) are followed here, each by the runner that holds it
  // first (their videos downloaded into its output folder).
  // One at a time: while the store does not answer, the one under way waits (state/pg/outage.ts).
  let takingOver = false;
  let takeovers: NodeJS.Timeout | undefined;
  function takeOverRound(): void {
    if (takingOver) return;
    takingOver = true;
    void fleet
      .takeOverLost()
      .then(async (found) => {
        if (found.unheld > 0 && !stop.aborted) await engine.followUnheld();
      })
      .catch((error: unknown) => {
        // Unreachable past the limit: an idle watcher learns it here.
        if (error instanceof StoreUnreachableError) engine.stopForState(error);
        else if (!(error instanceof StateFileError))
          log.warn({ err: (error as Error).message }, "could not take over the work of silent runners");
      })
      .finally(() => {
        takingOver = false;
      });
  }

  return {
    // What a runner gone left is sorted by the same takeover the runners do as they work: only a gone
    // runner's, never a live one's. Said by the listener above, as every takeover is.
    takeOverStopped: async () => {
      await fleet.takeOverLost();
    },
    takeOverSilent: async () => {
      await fleet.takeOverLost();
    },
    start() {
      takeovers ??= setInterval(takeOverRound, fleet.heartbeatMs);
    },
    async takeUp(row, key) {
      // A job another runner submits, follows or downloads is left to it, and worked on again once
      // it lets go (see elsewhere.ts).
      if (row.state === "submitting") return false;
      if (row.state === "submitted") return fleet.holdTask(row.id);
      if (row.state !== "Success") return true;
      if (row.file === null && (await fleet.heldElsewhere([row.id])).size > 0) return false;
      // The display tells it from this run's own work.
      progress.event({ stage: "made-elsewhere", key });
      return true;
    },
    untilLetGo: (rowId) => elsewhere.until(rowId),
    followTask: (rowId) => fleet.holdTask(rowId),
    async claim(rowId, charge) {
      try {
        // Another runner holds a job whose claim found it taken.
        return (await store.markSubmitting(rowId, charge)) ?? "elsewhere";
      } catch (error) {
        if (error instanceof JobGoneError) return "forgotten";
        throw error;
      }
    },
    madePendingElsewhere: async (rowId) => (await store.findJobById(rowId))?.state === "pending",
    sendDelay: () => (fleet.leaseInDoubt() ? fleet.heartbeatMs : undefined),
    slots,
    otherRunnerWon: (error) => error instanceof ClaimLostError,
    // A gone runner's call becomes uncertain when it is taken over.
    speechUnderWay: (row) => row.state === "creating",
    // While its intent stays, the other runners wait for this upload.
    dropsUploadIntent: () => true,
    dispose() {
      disposed = true;
      clearInterval(takeovers);
      elsewhere.dispose();
      quitTakeOvers();
    },
  };
}
