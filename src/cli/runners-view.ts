// The runners of a shared store, for `reel status`: who writes to a PostgreSQL store,
// whether each is alive, and the jobs it holds. A state file has no runners (one process at a time,
// held off by its lock): nothing is shown for one.
import { formatDuration } from "../duration.js";
import type { FleetView, JobStore } from "../state/job-store.js";
import { plural } from "../plural.js";
import { RUNNERS_SHOWN_MS } from "../state/pg/lease.js";
import type { RunnerView } from "../state/pg/store.js";
import { isPostgresUrl } from "../state/pg/store-url.js";

/** The runners of `store` when it is a PostgreSQL store (read before it closes); else undefined. */
export async function runnersOf(store: JobStore): Promise<RunnerView[] | undefined> {
  // The PostgreSQL store's module (and its driver) is loaded only when one was opened.
  if (!isPostgresUrl(store.path)) return undefined;
  const { PgStore } = await import("../state/pg/store.js");
  return store instanceof PgStore ? store.listRunners() : undefined;
}

/** What each service's fleet does now (a PostgreSQL store; else undefined), by base URL. */
export async function fleetsOf(store: JobStore): Promise<Map<string, FleetView> | undefined> {
  if (!isPostgresUrl(store.path)) return undefined;
  const { PgStore } = await import("../state/pg/store.js");
  return store instanceof PgStore ? store.fleetViews() : undefined;
}

/**
 * A line per service whose fleet is at work, as a runner's live display says it: `done` are its
 * videos made (Success), counted by the caller from the jobs shown.
 */
export function describeFleets(
  fleets: ReadonlyMap<string, FleetView>,
  done: (service: string) => number,
): string[] {
  return [...fleets].map(([service, f]) => {
    const held = f.uncertainHeld > 0 ? ` (and ${f.uncertainHeld} uncertain holding a slot)` : "";
    return `Fleet of ${service}: ${plural(f.runners, "runner")} · in flight ${f.inFlight}${f.bound > 0 ? ` of ${f.bound}` : ""}${held} · done ${done(service)}`;
  });
}

/** A runner in `status --json`: times as ISO strings, like the jobs'. */
export function runnerJson(runner: RunnerView): {
  id: number;
  host: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
  state: RunnerView["state"];
  jobsHeld: number;
} {
  return {
    id: runner.id,
    host: runner.host,
    pid: runner.pid,
    startedAt: new Date(runner.startedAt).toISOString(),
    heartbeatAt: new Date(runner.heartbeatAt).toISOString(),
    state: runner.state,
    // Jobs being submitted or followed under its name (its claims and leases).
    jobsHeld: runner.jobsHeld,
  };
}

/** The runners as a short table, for status's text after the jobs. */
export function describeRunners(runners: readonly RunnerView[]): string[] {
  if (runners.length === 0)
    return [`Runners: none heard from in the last ${formatDuration(RUNNERS_SHOWN_MS)}.`];
  const rows = runners.map((runner) => [
    runner.host,
    String(runner.pid),
    // UTC, to the second: runners on several machines (and time zones) read alike.
    `${new Date(runner.startedAt).toISOString().slice(0, 19).replace("T", " ")}Z`,
    `${formatDuration(runner.heartbeatAgeMs)} ago`,
    runner.state,
    String(runner.jobsHeld),
  ]);
  const header = ["host", "pid", "started", "last heartbeat", "state", "jobs held"];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  // Numbers to the right, text to the left.
  const right = new Set([1, 5]);
  const line = (cells: readonly string[]): string =>
    `  ${cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()}`;
  return [`Runners (${runners.length}):`, line(header), ...rows.map(line)];
}
