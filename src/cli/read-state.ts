// `plan` and `status` only read the state file. One they cannot use (another program's, damaged,
// written by a newer reel) is bad input to them: exit 2, as PRODUCT.md lists only 0 and 2 for them.
import { UsageError } from "../errors.js";
import { StateFileError, StateStore } from "../state/store.js";

/** Opens `path` read-only, for the service `baseUrl` (its last service when "last", every one when undefined). */
export function openStateToRead(path: string, baseUrl: string | "last" | undefined): StateStore {
  try {
    const service = baseUrl === "last" ? StateStore.lastService(path) : baseUrl;
    return StateStore.open(
      path,
      service === undefined ? { readonly: true } : { readonly: true, baseUrl: service },
    );
  } catch (error) {
    if (error instanceof StateFileError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
}
