// The errors of the state store, re-exported by store.ts (where callers import them from).
import { ReelError } from "../errors.js";

/**
 * E_STATE_FILE: the file cannot be used (damaged, foreign, unreadable), found before anything is
 * sent. E_STATE_WRITE: a write failed during the work (disk full).
 */
export class StateFileError extends ReelError {
  constructor(message: string, options?: { cause?: unknown; code?: "E_STATE_FILE" | "E_STATE_WRITE" }) {
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
