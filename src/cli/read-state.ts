// `plan` and `status` only read the state file. One they cannot use (another program's, damaged,
// written by a newer reel) is bad input to them: exit 2, as PRODUCT.md lists only 0 and 2 for them.
import { UsageError } from "../errors.js";
import { StateFileError, StateStore } from "../state/store.js";

/** Opens `path` read-only, for the service `baseUrl` (every service's jobs when undefined). */
export function openStateToRead(path: string, baseUrl: string | undefined): StateStore {
  return asUsageError(() =>
    StateStore.open(path, baseUrl === undefined ? { readonly: true } : { readonly: true, baseUrl }),
  );
}

/** The service whose jobs changed last in the state file at `path`, if any. */
export function lastServiceOf(path: string): string | undefined {
  return asUsageError(() => StateStore.lastService(path));
}

function asUsageError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof StateFileError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
}
