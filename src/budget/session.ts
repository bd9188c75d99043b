// A budget session: what a cap counts. A run's session is the run, and every run of the same
// manifests (and --only) that resumes it after it stopped before its end (a crash, kill -9, Ctrl-C,
// the cap, a fatal condition): a resumed run counts what the earlier ones sent. The first run that
// ends with its work done ends the session, so the next run counts from nothing. A watcher's session
// is one watch of one folder, resumed after a crash, ended by a clean stop.
//
// A session whose run still runs is that run's (two runs at once count apart: in a fleet each runner
// counts its own); one whose run is gone is resumed. Who runs is the store's to say, never a host
// name and a pid (another machine, a container restarted in a new PID namespace, reuse the same
// ones or give new ones to the same run): on a state file, its lock (one process writes it, so
// every session but this store's own has no run left); on a shared store, the runner's heartbeats.
import { hostname } from "node:os";
import { UsageError } from "../errors/usage.js";
import type { PriceTable } from "../prices/index.js";
import type { BudgetOwner, JobStore, OpenBudgetSession } from "../state/job-store.js";
import type { Job } from "../manifest/index.js";
import { Budget } from "./budget.js";
import { type BudgetCaps, costOfTally } from "./cost.js";
import { checkSharedPriced, findSharedBudget } from "./named.js";

export interface BudgetRequest {
  readonly caps: BudgetCaps;
  readonly prices: PriceTable | undefined;
  /** What the session is of (see runScope, watchScope). */
  readonly scope: string;
  /** The named budget the run spends from too (--budget NAME, or reel.yaml's budget). */
  readonly budgetName?: string;
}

/** The scope of a run: its manifests and --only patterns. */
export function runScope(manifests: readonly string[], only: readonly string[]): string {
  return `run ${JSON.stringify({ manifests: [...new Set(manifests)].sort(), only: [...only].sort() })}`;
}

/** The scope of a run or watch that spends from named budget `name` with no cap of its own. */
function sharedScope(scope: string, name: string): string {
  return `${scope} budget ${name}`;
}

/** The scope of a watch: its folder (absolute). */
export function watchScope(dir: string): string {
  return `watch ${dir}`;
}

/** Recorded with a session for people to read (which machine, which process); never judged. */
function me(): BudgetOwner {
  return { host: hostname(), pid: process.pid };
}

export interface OpenBudgetOptions {
  /** Told, once, when the run waits to learn whether another runner still runs (a shared store). */
  readonly onWait?: (line: string) => void;
  /** Ends that wait early (Ctrl-C): the runners not yet told apart are counted as gone. */
  readonly signal?: AbortSignal;
  /** The jobs the run may send: refused before anything starts if a named budget cannot price them. */
  readonly jobs?: readonly Job[];
}

/**
 * The sessions of `scope` whose run is gone. On a shared store, a runner not stopped may be at work
 * or killed within its lease: its heartbeat moving on says it works; the takeover marking it lost
 * (past its lease, or at once when it ran on this machine and its process is gone) says it is gone.
 * Waited for, up to a lease and a few beats; a runner still not told apart after that is counted as
 * gone, the side that never passes a cap (its spend is counted here too).
 */
async function goneSessions(
  store: JobStore,
  scope: string,
  options: OpenBudgetOptions,
): Promise<OpenBudgetSession[]> {
  const { fleet } = store;
  if (fleet) await fleet.takeOverLost();
  let sessions = await store.openBudgetSessions(scope);
  const gone = sessions.filter((s) => s.runs === "gone");
  const heard = new Map<number, number>();
  for (const s of sessions) if (typeof s.runs === "object") heard.set(s.id, s.runs.heardAt);
  if (!fleet || heard.size === 0) return gone;
  const waitMs = fleet.leaseMs + 3 * fleet.heartbeatMs;
  const first = sessions.find((s) => heard.has(s.id))!;
  options.onWait?.(
    `the runner on ${first.host} (pid ${first.pid}) that counted this budget has not stopped: waiting up to ${Math.ceil(waitMs / 1_000)} s for its heartbeat or its lease to say whether it still runs (it then counts apart, or this run resumes its count)`,
  );
  const deadline = Date.now() + waitMs;
  while (heard.size > 0 && Date.now() < deadline && !options.signal?.aborted) {
    await sleep(fleet.heartbeatMs, options.signal);
    await fleet.takeOverLost();
    sessions = await store.openBudgetSessions(scope);
    const now = new Map(sessions.map((s) => [s.id, s]));
    for (const [id, heardAt] of heard) {
      const s = now.get(id);
      if (s?.runs === "gone") gone.push(s);
      // Ended, taken by another run, or heard again: not this run's to resume.
      if (!s || s.runs === "gone" || s.runs === "here" || s.runs.heardAt > heardAt) heard.delete(id);
    }
  }
  return [...gone, ...sessions.filter((s) => heard.has(s.id))];
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** The budget of a capped run: the session it resumes, or a new one. */
export async function openBudget(
  store: JobStore,
  request: BudgetRequest,
  options: OpenBudgetOptions = {},
): Promise<Budget> {
  const shared =
    request.budgetName === undefined ? undefined : await findSharedBudget(store, request.budgetName);
  if (options.jobs) checkSharedPriced(shared, options.jobs);
  const owner = me();
  const { maxSeconds, maxCredits } = request.caps;
  if (shared && maxSeconds === undefined && maxCredits === undefined) {
    // No cap of its own: nothing of a run before it to resume (the named budget holds the count),
    // so no wait for other runners of the same manifests; a scope of its own, so that a capped run
    // of them never resumes this one's count.
    const session = await store.startBudgetSession(sharedScope(request.scope, shared.row.name), owner);
    return new Budget(session, request.caps, request.prices, { seconds: 0, credits: 0 }, shared);
  }
  for (const session of await goneSessions(store, request.scope, options)) {
    if (!(await store.takeBudgetSession(session, owner))) continue;
    let earlier;
    try {
      earlier = costOfTally(await store.budgetSpent(session.id), request.prices, request.caps);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const resumed = { ...session, ...owner, runner: store.fleet?.runnerId ?? null };
    return new Budget(resumed, request.caps, request.prices, earlier, shared);
  }
  const session = await store.startBudgetSession(request.scope, owner);
  return new Budget(session, request.caps, request.prices, { seconds: 0, credits: 0 }, shared);
}

/**
 * The work of `scope` is done: its sessions end (this store's own, and those of runs before it that
 * are gone), so the next capped run counts from nothing. Called by runs without a cap too. A runner
 * of a fleet not known to be gone keeps its session (it may be at work).
 */
export async function endBudgetScope(store: JobStore, scope: string): Promise<void> {
  for (const session of await store.openBudgetSessions(scope)) {
    if (session.runs === "here" || session.runs === "gone") await store.endBudgetSession(session.id);
  }
}
