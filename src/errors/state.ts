// The errors of the state store (src/state), re-exported by state/job-store.ts beside the interface
// that names them. BudgetReachedError stays beside the named budget it carries (state/named-budget.ts).
import { ReelError } from "./reel-error.js";

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

/** Another reel holds the state file's lock (state/sqlite/db/lock.ts). */
export class StateLockedError extends ReelError {
  constructor(
    path: string,
    /** Who holds it, as far as can be told ("pid 1234"). */
    readonly holder: string | undefined,
  ) {
    super(
      "E_STATE_LOCKED",
      `another reel process${holder ? ` (${holder})` : ""} is using the state file ${path}. Wait for it to finish or stop it; two runners on one state file could pay twice for the same job. The lock is the system's own and ends with that process, even one killed.`,
    );
  }
}

/** Another address of the store in use, and how. */
export interface AddressInUse {
  readonly baseUrl: string;
  /** Runners of that address heard within their lease (a PostgreSQL store; 0 in a state file). */
  readonly liveRunners: number;
  /** Its jobs being submitted or made (submitting, submitted). */
  readonly unfinishedJobs: number;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Refused at registration: another address of the store is in use (exit 2, nothing sent). */
export class AddressInUseError extends ReelError {
  constructor(
    /** "state file" or "store": what the user calls it. */
    kind: string,
    readonly here: string,
    readonly others: readonly AddressInUse[],
  ) {
    const first = others[0]!;
    const how = others.map((o) => {
      const uses = [
        ...(o.liveRunners > 0 ? [count(o.liveRunners, "live runner", "live runners")] : []),
        ...(o.unfinishedJobs > 0 ? [count(o.unfinishedJobs, "unfinished job", "unfinished jobs")] : []),
      ];
      return `${o.baseUrl} (${uses.join(", ")})`;
    });
    super(
      "E_OTHER_SERVICE",
      `the ${kind} is in use through another address of the service: ${how.join(", ")}, not ${here}. ` +
        `If both are one service, every job would be generated twice: use --base-url ${first.baseUrl} (nothing is paid again), ` +
        `or finish its work there before moving. If it really is another service, add --new-service.`,
    );
  }
}
