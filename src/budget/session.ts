// A budget session: what a cap counts. A run's session is the run, and every run of the same
// manifests (and --only) that resumes it after it stopped before its end (a crash, kill -9, Ctrl-C,
// the cap, a fatal condition): a resumed run counts what the earlier ones sent. The first run that
// ends with its work done ends the session, so the next run counts from nothing. A watcher's session
// is one watch of one folder, resumed after a crash, ended by a clean stop.
//
// Sessions belong to a process on a machine: a session whose process still runs is another run's
// (two runs at once count apart), and in a fleet each runner counts its own (another machine's
// sessions are never resumed here).
import { hostname } from "node:os";
import { UsageError } from "../errors.js";
import type { PriceTable } from "../prices/index.js";
import type { BudgetOwner, BudgetSessionRow, JobStore } from "../state/store.js";
import { Budget, type BudgetCaps, costOfTally } from "./budget.js";

export interface BudgetRequest {
  readonly caps: BudgetCaps;
  readonly prices: PriceTable | undefined;
  /** What the session is of (see runScope, watchScope). */
  readonly scope: string;
}

/** The scope of a run: its manifests and --only patterns. */
export function runScope(manifests: readonly string[], only: readonly string[]): string {
  return `run ${JSON.stringify({ manifests: [...new Set(manifests)].sort(), only: [...only].sort() })}`;
}

/** The scope of a watch: its folder (absolute). */
export function watchScope(dir: string): string {
  return `watch ${dir}`;
}

function me(): BudgetOwner {
  return { host: hostname(), pid: process.pid };
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, someone else's
  }
}

/** Sessions of `scope` this process may resume or end: of this machine, whose process is gone. */
async function orphans(store: JobStore, scope: string): Promise<BudgetSessionRow[]> {
  const owner = me();
  return (await store.openBudgetSessions(scope)).filter(
    (s) => s.host === owner.host && (s.pid === owner.pid || !isRunning(s.pid)),
  );
}

/** The budget of a capped run: the session it resumes, or a new one. */
export async function openBudget(store: JobStore, request: BudgetRequest): Promise<Budget> {
  const owner = me();
  for (const session of await orphans(store, request.scope)) {
    if (!(await store.takeBudgetSession(session.id, session.pid, owner))) continue;
    let earlier;
    try {
      earlier = costOfTally(await store.budgetSpent(session.id), request.prices, request.caps);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    return new Budget({ ...session, ...owner }, request.caps, request.prices, earlier);
  }
  const session = await store.startBudgetSession(request.scope, owner);
  return new Budget(session, request.caps, request.prices, { seconds: 0, credits: 0 });
}

/**
 * The work of `scope` is done: its sessions end (this one's, and those of runs before it that
 * stopped early), so the next capped run counts from nothing. Called by runs without a cap too.
 */
export async function endBudgetScope(store: JobStore, scope: string): Promise<void> {
  for (const session of await orphans(store, scope)) await store.endBudgetSession(session.id);
}
