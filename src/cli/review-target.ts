// What the review commands (approve, reject, undecide, retake) act on: the state found as `status`
// finds it (from the current folder, or --state / --store), the service named as `run` names it
// (--sandbox, --base-url / REEL_BASE_URL, the project's baseUrl) or else the one service the state
// has jobs of, and the current version of each job the JOB patterns name (as --only takes them).
import { existsSync } from "node:fs";
import { UsageError } from "../errors/usage.js";
import { makeJobFilter, onlyHint } from "../manifest/index.js";
import { canonicalBaseUrl } from "../service-contract/base-url.js";
import type { JobRow } from "../state/job-store.js";
import type { CliIO, ParsedArgs } from "./command.js";
import { openStateToRead } from "./read-state.js";
import { isSandboxAddress } from "../state/service-address.js";
import { envSetting, refuseSandboxWithBaseUrl, sandboxServiceId } from "./service-options.js";
import { flagValue, type Workplace, workplaceOf } from "./workplace.js";

export interface ReviewTarget {
  readonly place: Workplace;
  /** The service, as the store names it (its row's base URL). */
  readonly baseUrl: string;
  /** The current version of every job named, in key order, each once. */
  readonly rows: readonly JobRow[];
  /** The current version of every job of that service. */
  readonly allRows: readonly JobRow[];
}

/** How the user names a service to reel: the flag that picks it. */
export function serviceFlag(baseUrl: string): string {
  return isSandboxAddress(baseUrl) ? "--sandbox" : `--base-url ${baseUrl}`;
}

/** The service the user named, as run names it; undefined when none. */
function namedService(args: ParsedArgs, io: CliIO, place: Workplace): string | undefined {
  refuseSandboxWithBaseUrl(args);
  if (args.values.sandbox === true) return sandboxServiceId(place.storeUrl);
  const url =
    flagValue(args.values, "base-url") ?? envSetting(io.env, "REEL_BASE_URL") ?? place.project?.baseUrl;
  return url === undefined ? undefined : canonicalBaseUrl(url);
}

/** The state found as `status` finds it, and the one service of it the user means. */
export interface ServiceTarget {
  readonly place: Workplace;
  /** The service, as the store names it (its row's base URL). */
  readonly baseUrl: string;
  /** The current version of every job of that service. */
  readonly allRows: readonly JobRow[];
}

/**
 * Finds the state (from `paths`, or the current folder) and the service: the one named, else the
 * one the state has jobs of. Refuses (UsageError, exit 2) a state with no jobs, an unnamed service
 * when the state has several, and a named one it has no jobs of.
 */
export async function findService(
  command: string,
  paths: readonly string[],
  args: ParsedArgs,
  io: CliIO,
): Promise<ServiceTarget> {
  const place = workplaceOf(paths, args, io);
  const named = namedService(args, io, place);
  if (place.storeUrl === undefined && !existsSync(place.statePath)) {
    throw new UsageError(
      `no state file at ${place.statePath}: nothing has run here yet, so there is no job to ${command}`,
    );
  }
  const reader = await openStateToRead(place.statePath, undefined, place.storeUrl);
  let latest: Awaited<ReturnType<typeof reader.listLatestJobs>>;
  try {
    latest = await reader.listLatestJobs();
  } finally {
    await reader.close();
  }
  const services = [...new Set(latest.map((row) => row.base_url))].sort();
  const where = place.storeUrl === undefined ? place.statePath : "the store";
  if (services.length === 0) throw new UsageError(`no jobs are recorded in ${where} yet`);
  let baseUrl: string;
  if (named !== undefined) {
    const found = services.find((service) => canonicalBaseUrl(service) === named);
    if (found === undefined) {
      throw new UsageError(
        `${where} has no jobs of ${named}; it has jobs of ${services.map(serviceFlag).join(", ")}: name that service instead`,
      );
    }
    baseUrl = found;
  } else if (services.length > 1) {
    throw new UsageError(
      `${where} has jobs of ${services.length} services; name one: ${services.map(serviceFlag).join(", ")}`,
    );
  } else {
    baseUrl = services[0]!;
  }
  return { place, baseUrl, allRows: latest.filter((row) => row.base_url === baseUrl) };
}

/**
 * Finds the state, the service (findService) and the jobs `patterns` name. Refuses (UsageError,
 * exit 2, nothing read further) no pattern, and a pattern that names no job of the service.
 */
export async function findReviewTarget(
  command: string,
  patterns: readonly string[],
  args: ParsedArgs,
  io: CliIO,
): Promise<ReviewTarget> {
  if (patterns.length === 0) {
    throw new UsageError(`name the jobs: reel ${command} MANIFEST/ID..., e.g. 'shop/mug~2' or 'shop/*'`);
  }
  const { place, baseUrl, allRows } = await findService(command, [], args, io);
  const chosen = new Set<JobRow>();
  for (const pattern of patterns) {
    const matches = makeJobFilter([pattern]);
    const found = allRows.filter((row) => matches(row.job_key));
    if (found.length === 0) {
      throw new UsageError(`no job matches '${pattern}'${onlyHint([pattern])}; nothing was changed`);
    }
    for (const row of found) chosen.add(row);
  }
  const rows = [...chosen].sort((a, b) => (a.job_key < b.job_key ? -1 : a.job_key > b.job_key ? 1 : 0));
  return { place, baseUrl, rows, allRows };
}
