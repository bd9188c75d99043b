// REEL_LEASE_SECONDS and REEL_UNCERTAIN_HOLD_SECONDS: how long a runner of a shared store keeps its
// work while silent, and how long an uncertain submission holds a slot of the account (see
// src/state/pg/lease.ts). Settings of the environment, not flags: every runner of a fleet should run
// by the same values, which are properties of the fleet, not of one command.
import { UsageError } from "../errors/usage.js";
import { type LeaseTiming, leaseTimingOf } from "../state/pg/lease.js";

export function leaseSetting(env: NodeJS.ProcessEnv): LeaseTiming {
  try {
    return leaseTimingOf(env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
