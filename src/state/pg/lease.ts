// The fleet's clock, in one place: how often a runner says it is alive, how long its
// silence is tolerated before another runner takes its work over, and how long a submission whose
// outcome is unknown is counted against the account's bound.
//
// Why these numbers: a lease is six heartbeats, so a runner is never taken for lost over a few missed
// beats (a garbage-collection pause, a slow statement, a network blip, a database restart it
// reconnects from), while the work of one killed with kill -9 (or whose machine vanished) is taken
// over within about half a minute: short beside a generation, which takes minutes. A beat is one
// small UPDATE every 5 s per runner: a hundred runners cost the database twenty a second.
// Every runner time, and the uncertain hold, is the database server's clock (see sql/runners.ts), so
// the machines' clocks need not agree.

/** A runner whose last heartbeat is older than this, and that did not stop, is lost. */
export const LEASE_MS = 30_000;

/** How often a writer records that it is alive: six beats to a lease. */
export const HEARTBEAT_MS = LEASE_MS / 6;

/**
 * A submission cut off before its answer (its runner killed mid-request) may have made a task that
 * now runs on the service, unseen: such an `uncertain` job counts against the account's bound of
 * unfinished generations for this long after it was found (by the database's clock), so that the
 * fleet never runs more at once than the bound, even then. Ten minutes covers a generation of usual
 * length; a slot is lost for that time only where a kill met a request on the wire, which is rare.
 */
export const UNCERTAIN_HOLD_MS = 10 * 60_000;

/**
 * The runners `reel status` lists: every one heard from within this time (running, stopped or lost
 * lately), and any older one still holding jobs. Every process that ever wrote adds a row, so the
 * whole table would only grow.
 */
export const RUNNERS_SHOWN_MS = 24 * 3_600_000;

/**
 * How long a runner waits for a store that stopped answering (pg/outage.ts) before it stops (exit 3).
 * Five minutes rides out a server's restart and a managed database's fail-over (a minute or two);
 * past that, a person should look, and a rerun goes on.
 */
export const STORE_OUTAGE_MS = 5 * 60_000;

/** The fleet's timing a store runs by: the defaults above, or the environment's (leaseTimingOf). */
export interface LeaseTiming {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly uncertainHoldMs: number;
  /** See STORE_OUTAGE_MS. */
  readonly outageMs: number;
}

export const DEFAULT_LEASE: LeaseTiming = {
  leaseMs: LEASE_MS,
  heartbeatMs: HEARTBEAT_MS,
  uncertainHoldMs: UNCERTAIN_HOLD_MS,
  outageMs: STORE_OUTAGE_MS,
};

/** A number of seconds from an environment variable, within [min, max]; undefined when unset. */
function secondsOf(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
  what: string,
): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < min || seconds > max) {
    throw new RangeError(
      `${name} must be a number of seconds from ${min} to ${max} (${what}), got ${JSON.stringify(value)}`,
    );
  }
  return seconds;
}

/**
 * The fleet's timing from the environment: REEL_LEASE_SECONDS (a fleet on a flaky network lengthens
 * it; the tests shorten it), with the heartbeat at a sixth of it, and REEL_UNCERTAIN_HOLD_SECONDS
 * (how long an uncertain submission counts against the account's bound: a service whose
 * generations take longer than ten minutes wants it longer). Defaults when unset. Every runner of a
 * fleet should use the same values: a runner judges the others by its own. And
 * REEL_STORE_OUTAGE_SECONDS: how long a store that stopped answering is waited for.
 */
export function leaseTimingOf(env: {
  readonly REEL_LEASE_SECONDS?: string | undefined;
  readonly REEL_UNCERTAIN_HOLD_SECONDS?: string | undefined;
  readonly REEL_STORE_OUTAGE_SECONDS?: string | undefined;
}): LeaseTiming {
  const lease = secondsOf(
    "REEL_LEASE_SECONDS",
    env.REEL_LEASE_SECONDS,
    0.5,
    3_600,
    "how long a silent runner keeps its work",
  );
  const hold = secondsOf(
    "REEL_UNCERTAIN_HOLD_SECONDS",
    env.REEL_UNCERTAIN_HOLD_SECONDS,
    0,
    86_400,
    "how long an uncertain submission holds a slot of the account",
  );
  const outage = secondsOf(
    "REEL_STORE_OUTAGE_SECONDS",
    env.REEL_STORE_OUTAGE_SECONDS,
    1,
    86_400,
    "how long a store that stopped answering is waited for",
  );
  const leaseMs = lease === undefined ? LEASE_MS : Math.round(lease * 1_000);
  return {
    leaseMs,
    heartbeatMs: lease === undefined ? HEARTBEAT_MS : Math.max(50, Math.round(leaseMs / 6)),
    uncertainHoldMs: hold === undefined ? UNCERTAIN_HOLD_MS : Math.round(hold * 1_000),
    outageMs: outage === undefined ? STORE_OUTAGE_MS : Math.round(outage * 1_000),
  };
}
