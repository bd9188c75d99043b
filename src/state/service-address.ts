// One address per service in use. A store scopes its jobs, claims and the fleet's bound by the
// service's base URL, so one service reached at once through two addresses (`localhost` and
// `127.0.0.1`, two DNS names, a proxy) is two services to it: every job made twice, twice the bound
// at once. Aliases cannot be told from a real second service, so the store takes a new address only
// while no other one is in use (live runners, or jobs being made), and decides it in the step that
// registers the writer (the state file's transaction under its lock; on PostgreSQL a transaction
// serialised by an advisory lock), so that two runners starting at the same instant cannot both win.
// A store whose other addresses rest (their runners stopped, their jobs done) is free to move: the
// jobs already sent there are then guarded one by one (engine/sent-elsewhere.ts).
import { ReelError } from "../errors/reel-error.js";

/**
 * Every identity of reel's in-process sandbox (`--sandbox`) starts so: `sandbox:local` in a state file,
 * and in a shared store one per machine (cli/service-options.ts sandboxServiceId), as each machine's
 * sandbox keeps its tasks and assets in a folder of its own. A sandbox's work is free: it never keeps
 * another address out, nor counts as work sent to another service.
 */
export const SANDBOX_PREFIX = "sandbox:";

/** Whether `baseUrl` names a sandbox (SANDBOX_PREFIX). */
export function isSandboxAddress(baseUrl: string): boolean {
  return baseUrl.startsWith(SANDBOX_PREFIX);
}

/** SQL: whether the column `column` (a service's base URL) names no sandbox. */
export const NOT_SANDBOX = (column: string): string => `${column} NOT LIKE '${SANDBOX_PREFIX}%'`;

/** A writer's wish to be the only address of its service in use; undefined to allow any. */
export interface ExclusiveAddress {
  /** Addresses whose work is free and never conflicts (the sandbox's). */
  readonly free: readonly string[];
}

/** Another address of the store in use, and how. */
export interface AddressInUse {
  readonly baseUrl: string;
  /** Runners of that address heard within their lease (a PostgreSQL store; 0 in a state file). */
  readonly liveRunners: number;
  /** Its jobs being submitted or made (submitting, submitted). */
  readonly unfinishedJobs: number;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Refused at registration: another address of the store is in use (exit 2, nothing sent). */
export class AddressInUseError extends ReelError {
  constructor(
    /** "state file" or "store": what the user calls it. */
    kind: string,
    readonly here: string,
    readonly others: readonly AddressInUse[],
  ) {
    const first = others[0]!;
    const how = others.map((o) => {
      const uses = [
        ...(o.liveRunners > 0 ? [count(o.liveRunners, "live runner", "live runners")] : []),
        ...(o.unfinishedJobs > 0 ? [count(o.unfinishedJobs, "unfinished job", "unfinished jobs")] : []),
      ];
      return `${o.baseUrl} (${uses.join(", ")})`;
    });
    super(
      "E_OTHER_SERVICE",
      `the ${kind} is in use through another address of the service: ${how.join(", ")}, not ${here}. ` +
        `If both are one service, every job would be generated twice: use --base-url ${first.baseUrl} (nothing is paid again), ` +
        `or finish its work there before moving. If it really is another service, add --new-service.`,
    );
  }
}
