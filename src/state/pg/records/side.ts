// What the PostgreSQL store's records (this folder) work on: the store's context, and the ways of
// its writes (through an outage, fenced by this runner's lease).
import type { TakeOver } from "../../job-store.js";
import type { Landed } from "../outage.js";
import type { PgContext } from "../sql/context.js";
import type { FleetContext } from "../sql/fleet.js";

export interface PgSide {
  readonly c: PgContext;
  /** `op`, through the outage (see ../outage.ts); `landed` for a write that is not idempotent. */
  io<T>(op: () => Promise<T>, landed?: Landed<T>): Promise<T>;
  /** `work`, whose LeaseLostError is also told to the fleet's listeners (FleetStore.onLeaseLost). */
  fenced<T>(work: Promise<T>): Promise<T>;
  /** The writer's context; a reader has none, and may not write (TypeError). */
  writer(): FleetContext;
  /** The fleet's takeover (FleetStore.takeOverLost), told to its listeners. */
  takeOverLost(): Promise<TakeOver>;
  /** A claim committed: this runner's lease is confirmed as a heartbeat confirms it. */
  claimed(): void;
}
