// The errors of the state store, re-exported by store.ts (where callers import them from).
import { ReelError } from "./reel-error.js";
import type { NamedBudget, NamedCharge } from "../state/named-budget.js";

/**
 * E_STATE_FILE: the file cannot be used (damaged, foreign, unreadable), found before anything is
 * sent. E_STATE_WRITE: a write failed during the work (disk full).
 */
export class StateFileError extends ReelError {
  constructor(
    message: string,
    options?: {
      cause?: unknown;
      code?: "E_STATE_FILE" | "E_STATE_WRITE" | "E_LEASE_LOST" | "E_STORE_UNREACHABLE";
    },
  ) {
    super(options?.code ?? "E_STATE_FILE", message, options);
  }
}

/**
 * A write-ahead intent that did not win its row: it is no longer in the state the caller read (two
 * processes on one state file, whatever fooled the lock). Nothing may be sent for it.
 */
export class ClaimLostError extends ReelError {
  constructor(message: string) {
    super("E_STATE_CLAIMED", message);
  }
}

/**
 * The job's row is gone (forgotten: its video left its manifest before it was sent). Nothing may be
 * sent or recorded for it. In a fleet another watcher may forget a row this runner was about to
 * claim: the claim is then simply lost.
 */
export class JobGoneError extends StateFileError {}

/**
 * A runner of a shared store lost its lease: silent for longer than the lease (paused, asleep, cut
 * off from the database), another runner took its work over. It must not act on work it no longer
 * holds, so it stops; what it held is followed by the others, and a rerun goes on.
 */
export class LeaseLostError extends StateFileError {
  constructor(message: string) {
    super(message, { code: "E_LEASE_LOST" });
  }
}

/**
 * A shared store (PostgreSQL) stayed unreachable past the limit (pg/outage.ts): the run stops, and a
 * rerun goes on from what was recorded.
 */
export class StoreUnreachableError extends StateFileError {
  constructor(message: string) {
    super(message, { code: "E_STORE_UNREACHABLE" });
  }
}

/**
 * A named budget has no room for a charge: the intent it went with was not written, nothing may be
 * sent. `budget` is the budget as the check found it.
 */
export class BudgetReachedError extends ReelError {
  constructor(
    readonly budget: NamedBudget,
    readonly charge: NamedCharge,
  ) {
    super("E_BUDGET", `not sent: the budget '${budget.name}' has no room for it`);
  }
}
