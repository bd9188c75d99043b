// The one place that chooses the job store's backend. Today that is the SQLite state file
// (StateStore) alone; callers get a JobStore, so a second backend (PostgreSQL, issue 18) slots in
// here without touching them. What only a state file has (its lock, its journal scope from its real
// path, the service it used last) stays with StateStore's static helpers, at the CLI's edge.
import type { JobStore } from "./job-store.js";
import { type OpenStateOptions, StateStore } from "./store.js";

/** Opens the store at `path` (a state file) for `options.baseUrl`'s jobs. */
export async function openJobStore(path: string, options: OpenStateOptions): Promise<JobStore> {
  return StateStore.open(path, options);
}
