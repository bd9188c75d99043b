// The one place that chooses the job store's backend: the SQLite state file (StateStore), or with a
// postgres:// URL the shared store on PostgreSQL (PgStore). Callers get a JobStore. What only a state
// file has (its lock file, its journal scope from its real path, the service it used last) stays with
// StateStore's static helpers, at the CLI's edge.
import type { JobStore, NamedBudgetRecords, OutageEvent, ReviewStore } from "./job-store.js";
import type { LeaseTiming } from "./pg/lease.js";
import { type OpenStateOptions, StateStore } from "./sqlite/store.js";

export { isPostgresUrl, redactedUrl, storeSecretValues } from "./pg/store-url.js";

export interface OpenJobStoreOptions extends OpenStateOptions {
  /** A writer's --concurrency, recorded with its runner in a PostgreSQL store (a state file has none). */
  readonly concurrency?: number;
  /** The fleet's timing, in a PostgreSQL store (see pg/lease.ts). */
  readonly lease?: LeaseTiming;
  /** A PostgreSQL reader that does not bring the schema up (see PgStore.open's withoutMigrating). */
  readonly withoutMigrating?: boolean;
  /** A PostgreSQL store that does not answer while it opens, and answers again (see PgStore.open). */
  readonly onOutage?: (event: OutageEvent) => void;
}

/**
 * Opens the store for `options.baseUrl`'s jobs: the PostgreSQL store at `storeUrl` when given, else
 * the state file at `path`.
 */
export async function openJobStore(
  path: string,
  options: OpenJobStoreOptions,
  storeUrl?: string,
): Promise<JobStore> {
  if (storeUrl !== undefined) {
    // Loaded only for a shared store: the driver is a tenth of a state file's command's start.
    const { PgStore } = await import("./pg/store.js");
    return PgStore.open(storeUrl, {
      ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.lease !== undefined ? { lease: options.lease } : {}),
      ...(options.onOutage !== undefined ? { onOutage: options.onOutage } : {}),
      readonly: options.readonly === true,
      ...(options.withoutMigrating === true ? { withoutMigrating: true } : {}),
      ...(options.exclusiveAddress ? { exclusiveAddress: options.exclusiveAddress } : {}),
    });
  }
  return StateStore.open(path, options);
}

/**
 * Opens the store to decide and retake (ReviewStore) beside a run or watch that holds it: the state
 * file at `path` without its lock, or the PostgreSQL store at `storeUrl` without a runner. The store
 * must exist and know `options.baseUrl`'s service (StateFileError otherwise).
 */
export async function openReviewStore(
  path: string,
  options: { readonly baseUrl: string; readonly now?: () => number },
  storeUrl?: string,
): Promise<ReviewStore> {
  if (storeUrl !== undefined) {
    const { PgStore } = await import("./pg/store.js");
    return PgStore.open(storeUrl, { ...options, review: true });
  }
  return StateStore.open(path, { ...options, review: true });
}

/** What `reel budget` uses of a store: the named budgets, and closing it. */
export type BudgetStore = NamedBudgetRecords & Pick<JobStore, "path" | "close">;

/**
 * Opens the store to set and show named budgets beside the runs and watches that may hold it: the
 * state file at `path` without its lock (created if missing), or the PostgreSQL store at `storeUrl`
 * without a runner.
 */
export async function openBudgetStore(path: string, storeUrl?: string): Promise<BudgetStore> {
  if (storeUrl !== undefined) {
    const { PgStore } = await import("./pg/store.js");
    return PgStore.open(storeUrl, { budgets: true });
  }
  return StateStore.open(path, { budgets: true });
}
