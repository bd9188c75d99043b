// The live display of a fleet's runner says what the whole fleet does (display/frame.ts's fleet
// line): the store's counts are read every FLEET_VIEW_MS and handed to the display as a `fleet`
// event. Only for a display on a terminal (lines and JSON have no use for them) and on a shared
// store; one small statement over indexes the size of the bound (pg/sql/fleet-view.ts), skipped
// while the previous one is under way or the store does not answer.
import type { FleetTelling } from "./coordination.js";
import type { FleetStore } from "../state/job-store.js";

/** How often the fleet is read: the display's counts move on about this often. */
export const FLEET_VIEW_MS = 2_000;

/** Starts reading `fleet` for `progress`; returns what stops it. */
export function pollFleetView(
  fleet: FleetStore,
  progress: FleetTelling,
  everyMs = FLEET_VIEW_MS,
): () => void {
  let reading = false;
  let stopped = false;
  const read = (): void => {
    if (reading || stopped) return;
    reading = true;
    void fleet
      .view()
      .then((view) => {
        if (view && !stopped) progress.event({ stage: "fleet", fleet: view });
      })
      .finally(() => {
        reading = false;
      });
  };
  read();
  const timer = setInterval(read, everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
