// One address per service in use. A store scopes its jobs, claims and the fleet's bound by the
// service's base URL, so one service reached at once through two addresses (`localhost` and
// `127.0.0.1`, two DNS names, a proxy) is two services to it: every job made twice, twice the bound
// at once. Aliases cannot be told from a real second service, so the store takes a new address only
// while no other one is in use (live runners, or jobs being made), and decides it in the step that
// registers the writer (the state file's transaction under its lock; on PostgreSQL a transaction
// serialised by an advisory lock), so that two runners starting at the same instant cannot both win.
// A store whose other addresses rest (their runners stopped, their jobs done) is free to move: the
// jobs already sent there are then guarded one by one (engine/service-alias-check.ts).
// The refusal is AddressInUseError (src/errors/state.ts).

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
