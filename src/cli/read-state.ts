// `plan` and `status` only read the state file. One they cannot use (another program's, damaged,
// written by a newer reel) is bad input to them: exit 2, as the README lists only 0 and 2 for them.
import { UsageError } from "../errors/usage.js";
import { openJobStore, openReviewStore } from "../state/open-job-store.js";
import { StateStore } from "../state/sqlite/store.js";
import type { JobStore, ReviewStore } from "../state/job-store.js";
import { StateFileError } from "../errors/state.js";

/**
 * Opens `path` read-only (or the PostgreSQL store at `storeUrl`), for the service `baseUrl` (every
 * service's jobs when undefined).
 */
export async function openStateToRead(
  path: string,
  baseUrl: string | undefined,
  storeUrl?: string,
): Promise<JobStore> {
  try {
    return await openJobStore(
      path,
      baseUrl === undefined ? { readonly: true } : { readonly: true, baseUrl },
      storeUrl,
    );
  } catch (error) {
    throw asUsageError(error);
  }
}

/**
 * Opens the store to decide and retake (ReviewStore) beside a run or watch that may hold it, for the
 * service `baseUrl` (as the store names it).
 */
export async function openStateToReview(
  path: string,
  baseUrl: string,
  storeUrl?: string,
): Promise<ReviewStore> {
  try {
    return await openReviewStore(path, { baseUrl }, storeUrl);
  } catch (error) {
    throw asUsageError(error);
  }
}

/** The service whose jobs changed last in the state file at `path`, if any. */
export function lastServiceOf(path: string): string | undefined {
  try {
    return StateStore.lastService(path);
  } catch (error) {
    throw asUsageError(error);
  }
}

function asUsageError(error: unknown): unknown {
  return error instanceof StateFileError ? new UsageError(error.message, { cause: error }) : error;
}
