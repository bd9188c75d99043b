// The coordination of the runners of a store (coordination.ts), chosen here once from the store:
// a shared store (PostgreSQL) makes its runner one of a fleet; a state file, a runner alone.
import type { JobStore } from "../state/job-store.js";
import type { Coordination } from "./coordination.js";
import { fleetCoordination } from "./fleet.js";
import { soloCoordination } from "./solo.js";

export type {
  Claim,
  Coordination,
  Coordinator,
  EngineSide,
  FleetTelling,
  IntentCoordination,
  SlotTurn,
} from "./coordination.js";
export { SOLO_INTENTS } from "./solo.js";
export { outageNote } from "./notes.js";

export function coordinationOf(store: JobStore): Coordination {
  return store.fleet ? fleetCoordination(store, store.fleet) : soloCoordination(store);
}
