// How a writer of the shared store reaches the fleet (FleetStore, see ../contract/fleet.ts): its
// lease and takeovers, the account's slots, what the fleet does now. The rules themselves are the
// statements' (sql/fleet.ts); the news of a lease lost or a takeover, FleetNews's.
import type pg from "pg";
import type { FleetStore, TakeOver } from "../job-store.js";
import type { FleetNews } from "./fleet-news.js";
import type { Heartbeat } from "./heartbeat.js";
import type { Outage } from "./outage.js";
import type { SlotNotices } from "./slot-notices.js";
import { type FleetContext, heldElsewhere, holdTask } from "./sql/fleet.js";
import { takeOverLost } from "./sql/takeover.js";
import { fleetView } from "./sql/fleet-view.js";

/** A writer's runner: its row in `runners`, and the heartbeat that keeps it alive there. */
export interface Runner {
  readonly id: number;
  /** Where its pid names it (see ../pid-space.ts). */
  readonly pidSpace: string;
  readonly heartbeat: Heartbeat;
  /** The heartbeat's own connection. */
  readonly pool: pg.Pool;
  /** The slots other runners free, heard on a connection of its own. */
  readonly notices: SlotNotices;
}

export function fleetStore(w: FleetContext, runner: Runner, news: FleetNews, outage: Outage): FleetStore {
  return {
    runnerId: w.runnerId,
    leaseMs: w.lease.leaseMs,
    heartbeatMs: w.lease.heartbeatMs,
    takeOverLost: async (): Promise<TakeOver> => {
      const found = await news.fenced(outage.run(() => takeOverLost(w)));
      news.tellTakeOver(found);
      return found;
    },
    onTakeOver: (listener) => news.onTakeOver(listener),
    holdTask: (id) => news.fenced(outage.run(() => holdTask(w, id))),
    heldElsewhere: (ids) => outage.run(() => heldElsewhere(w, ids)),
    // Two beats short of the lease: the other runners judge by the database's clock, and a beat or
    // two may be on its way.
    leaseInDoubt: () =>
      performance.now() - runner.heartbeat.confirmedAt > w.lease.leaseMs - 2 * w.lease.heartbeatMs,
    onLeaseLost: (listener) => news.onLeaseLost(listener),
    onOutage: (listener) => outage.onChange(listener),
    // On the writer's connection, after its statements: the others hear of the slot once the
    // write that freed it has committed. Nobody to tell while no other runner was heard.
    slotFree: () => (runner.notices.othersHeard ? runner.notices.tellFree(w.pool) : undefined),
    onSlotFree: (listener) => runner.notices.onFree(listener),
    // Not through the outage: a display's reading is skipped while the store does not answer.
    view: () => fleetView(w, w.serviceId, w.runnerId, w.lease).catch(() => undefined),
  };
}
