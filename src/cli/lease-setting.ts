// REEL_LEASE_SECONDS: how long a runner of a shared store keeps its work while silent (see
// src/state/pg/lease.ts). A setting of the environment, not a flag: every runner of a fleet should
// run by the same value, which is a property of the fleet, not of one command.
import { UsageError } from "../errors.js";
import { type LeaseTiming, leaseTimingOf } from "../state/pg/lease.js";

export function leaseSetting(env: NodeJS.ProcessEnv): LeaseTiming {
  try {
    return leaseTimingOf(env.REEL_LEASE_SECONDS);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
