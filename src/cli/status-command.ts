// `reel status [PATH...]`: jobs per manifest and state, read from the state file alone (no call to
// the service). With PATHs, only the manifests found there. On a PostgreSQL store, its runners too.
import { existsSync } from "node:fs";
import { type JobResult, resultOf } from "../output/job-record.js";
import { plural } from "../plural.js";
import { type DecisionCounts, countDecisions } from "../review/decision-counts.js";
import { decisionFieldsOf } from "../output/decision-fields.js";
import type { DecisionRow, JobStore, RetakeRow } from "../state/job-store.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { manifestsNamed } from "./manifests-named.js";
import { MAX_VIDEOS_OPTION, maxVideosUsage } from "./max-videos.js";
import { openStateToRead } from "./read-state.js";
import { describeFleets, describeRunners, fleetsOf, runnerJson, runnersOf } from "./runners-view.js";
import { readerServiceOf } from "./service-options.js";
import { workplaceJson, workplaceLine, workplaceOf } from "./workplace.js";

export const statusCommand: Command = {
  name: "status",
  usage: `Usage: reel status [PATH...] [--state FILE] [--base-url URL | --sandbox] [--json]

PATH: manifest files or folders, to show only their jobs. Nothing is sent to the service.

Options:
  --store URL        the shared store on PostgreSQL (env REEL_STORE): every runner's jobs, and
                     the runners (host, pid, started, last heartbeat, state, jobs held)
  --state FILE       state file (env REEL_STATE; default: the project's, found from PATH or the
                     current folder as run finds it)
  --base-url URL     only the jobs run against this service (default: every service in the file)
  --sandbox          only the jobs run with --sandbox
  --allow-read DIR   let manifests read files under DIR too (repeatable)
${maxVideosUsage(21)}
  --json             machine-readable output on stdout

Exit codes: 0 (also when there is no state file yet), 2 bad options or a state file that
cannot be read.`,
  options: {
    state: { type: "string" },
    store: { type: "string" },
    "base-url": { type: "string" },
    sandbox: { type: "boolean" },
    json: { type: "boolean" },
    "allow-read": { type: "string", multiple: true },
    ...MAX_VIDEOS_OPTION,
  },
  run: runStatus,
};

async function runStatus(args: ParsedArgs, io: CliIO): Promise<number> {
  const place = workplaceOf(args.positionals, args, io);
  const statePath = place.statePath;
  const json = args.values.json === true;
  const loaded = await manifestsNamed(args, io, place);
  // Every manifest found counts, valid or not: one broken by an edit still has jobs to show. Of a
  // valid one, only the videos it lists now: one removed from it is no longer its job.
  const names = loaded && new Set(loaded.names);
  const listedKeys = new Map<string, Set<string>>();
  for (const manifest of loaded?.manifests ?? []) {
    listedKeys.set(manifest.name, new Set(manifest.jobs.map((job) => job.key)));
  }
  if (place.storeUrl === undefined && !existsSync(statePath)) {
    if (json) {
      // `exists`: a mistyped --state or REEL_STATE is told apart from a state with no jobs.
      const output = {
        ok: true,
        ...workplaceJson(place),
        exists: false,
        manifests: {},
        services: {},
        jobs: [],
      };
      io.stdout.write(`${JSON.stringify(output)}\n`);
    } else {
      io.stdout.write(
        `${workplaceLine(place, io.cwd, false)}\nNo state file at ${statePath}: nothing has run yet.\n`,
      );
    }
    return EXIT.ok;
  }
  const baseUrl = readerServiceOf(args, place.storeUrl);
  const store = await openStateToRead(statePath, baseUrl, place.storeUrl);
  let rows: Awaited<ReturnType<JobStore["listLatestJobs"]>>;
  let runners: Awaited<ReturnType<typeof runnersOf>>;
  let fleets: Awaited<ReturnType<typeof fleetsOf>>;
  let decided: DecisionRow[];
  let retakes: RetakeRow[];
  try {
    rows = (await store.listLatestJobs()).filter(
      (row) =>
        !names || (names.has(row.manifest) && (listedKeys.get(row.manifest)?.has(row.job_key) ?? true)),
    );
    runners = await runnersOf(store);
    fleets = await fleetsOf(store);
    decided = await store.latestDecisions();
    retakes = (await store.listRetakes()).filter(
      (r) => !names || (names.has(r.manifest) && (listedKeys.get(r.manifest)?.has(r.key) ?? true)),
    );
  } finally {
    await store.close();
  }
  // Both name the service as the store does: the same base URL string.
  const decisionOf = new Map(decided.map((d) => [`${d.baseUrl}\n${d.key}\n${d.specHash}`, d]));
  const reviewed = rows.map((row) => ({
    row,
    decision: decisionOf.get(`${row.base_url}\n${row.job_key}\n${row.spec_hash}`),
  }));
  const jobs = reviewed.map(({ row, decision }) => ({ ...resultOf(row, decision), service: row.base_url }));
  const decisions = countDecisions(
    reviewed.map(({ row, decision }) => ({ row, fields: decisionFieldsOf(decision) })),
    retakes,
  );
  /** A service's videos made, of the jobs shown (their latest versions). */
  const doneOf = (service: string): number =>
    jobs.filter((job) => job.service === service && job.status === "Success").length;
  if (json) {
    // `manifests` adds up every service's jobs (its shape predates `services`); `services` keeps
    // them apart, by base URL, for a file shared by several.
    const services: Record<string, StatusCounts> = {};
    for (const service of new Set(jobs.map((job) => job.service))) {
      services[service] = countStatuses(jobs.filter((job) => job.service === service));
    }
    const output = {
      ok: true,
      ...workplaceJson(place),
      exists: true,
      manifests: countStatuses(jobs),
      decisions,
      services,
      jobs,
      ...(runners ? { runners: runners.map(runnerJson) } : {}),
      ...(fleets
        ? {
            fleet: Object.fromEntries(
              [...fleets].map(([service, f]) => [service, { ...f, done: doneOf(service) }]),
            ),
          }
        : {}),
    };
    io.stdout.write(`${JSON.stringify(output)}\n`);
    return EXIT.ok;
  }
  io.stdout.write(`${workplaceLine(place, io.cwd, true)}\n`);
  const runnerLines = runners ? ["", ...describeRunners(runners)] : [];
  if (fleets && fleets.size > 0) runnerLines.push("", ...describeFleets(fleets, doneOf));
  if (jobs.length === 0) {
    io.stdout.write(["No jobs recorded.", ...runnerLines, ""].join("\n"));
    return EXIT.ok;
  }
  // Jobs of several services in one file are shown apart: their counts are not one batch's.
  const services = [...new Set(jobs.map((job) => job.service))];
  const lines: string[] = [];
  for (const service of services) {
    const own = services.length > 1 ? jobs.filter((job) => job.service === service) : jobs;
    if (services.length > 1) lines.push(`${lines.length > 0 ? "\n" : ""}${service}:`);
    // Reviews are shown once a decision is recorded: a team that never reviews sees no new line.
    const ownDecisions = countDecisions(
      reviewed
        .filter(({ row }) => services.length === 1 || row.base_url === service)
        .map(({ row, decision }) => ({ row, fields: decisionFieldsOf(decision) })),
      retakes.filter((r) => services.length === 1 || r.baseUrl === service),
    );
    lines.push(...describeJobs(own, decided.length > 0 ? ownDecisions : undefined));
  }
  lines.push(...runnerLines);
  io.stdout.write(`${lines.join("\n")}\n`);
  return EXIT.ok;
}

/** Jobs by manifest, then by status. */
type StatusCounts = Record<string, Record<string, number>>;

function countStatuses(jobs: readonly JobResult[]): StatusCounts {
  const counts: StatusCounts = {};
  for (const job of jobs) {
    const own = (counts[job.manifest] ??= {});
    own[job.status] = (own[job.status] ?? 0) + 1;
  }
  return counts;
}

/**
 * A line per manifest (jobs by status; its decisions below it, when given), then a line per job that
 * needs the user's attention.
 */
function describeJobs(jobs: readonly JobResult[], decisions?: Record<string, DecisionCounts>): string[] {
  const perManifest = new Map<string, Map<string, number>>();
  for (const job of jobs) {
    const counts = perManifest.get(job.manifest) ?? new Map<string, number>();
    perManifest.set(job.manifest, counts);
    counts.set(job.status, (counts.get(job.status) ?? 0) + 1);
  }
  const lines: string[] = [];
  for (const [manifest, counts] of perManifest) {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const parts = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([status, n]) => `${n} ${status}`);
    lines.push(
      `${manifest.padEnd(24)} ${String(total).padStart(5)} ${total === 1 ? "job" : "jobs"}: ${parts.join(", ")}`,
    );
    const review = decisions?.[manifest];
    if (review) {
      lines.push(
        `  review: ${review.approved} approved, ${review.rejected} rejected, ${review.undecided} undecided${review.retakesQueued > 0 ? `, ${plural(review.retakesQueued, "retake")} queued` : ""}`,
      );
    }
  }
  for (const job of jobs) {
    if (job.error !== null) lines.push(`  ${job.manifest}/${job.id}: ${job.status}: ${job.error}`);
    else if (job.status === "Success" && job.file === null) {
      lines.push(`  ${job.manifest}/${job.id}: Success: not downloaded yet (rerun to download it)`);
    }
  }
  return lines;
}
