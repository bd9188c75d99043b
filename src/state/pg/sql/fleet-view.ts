// What the fleet of a service is doing now, for the live display of each runner (every ~2 s) and
// `reel status`: one statement of counts over the partial indexes that hold only unfinished and
// lately uncertain jobs (jobs_unfinished, jobs_uncertain_since) and live runners (runners_live), so
// its cost is that of the bound and the runners, whatever the number of jobs in the store.
import type { FleetView } from "../../job-store.js";
import type { LeaseTiming } from "../lease.js";
import { type PgContext, toNumber } from "./context.js";
import { DB_NOW } from "./runners.js";

/** Each service's fleet now (fleetView), by base URL: those with runners alive or jobs in flight. */
export async function fleetViews(
  c: Pick<PgContext, "pool">,
  lease: Pick<LeaseTiming, "leaseMs" | "uncertainHoldMs">,
): Promise<Map<string, FleetView>> {
  const { rows } = await c.pool.query<{ id: string; base_url: string }>(
    "SELECT id, base_url FROM services ORDER BY id",
  );
  const views = new Map<string, FleetView>();
  for (const row of rows) {
    const view = await fleetView(c, toNumber(row.id), undefined, lease);
    if (view.runners > 0 || view.inFlight > 0 || view.uncertainHeld > 0) views.set(row.base_url, view);
  }
  return views;
}

/** The counts of `serviceId`'s fleet now; `runnerId`'s own jobs in flight as `mine` (0 without one). */
export async function fleetView(
  c: Pick<PgContext, "pool">,
  serviceId: number,
  runnerId: number | undefined,
  lease: Pick<LeaseTiming, "leaseMs" | "uncertainHoldMs">,
): Promise<FleetView> {
  const { rows } = await c.pool.query<{
    in_flight: string;
    mine: string;
    uncertain_held: string;
    runners: string;
    bound: number | null;
  }>(
    `WITH unfinished AS (SELECT runner_id FROM jobs WHERE service_id = $1 AND state IN ('submitting', 'submitted')),
          live AS (SELECT concurrency FROM runners WHERE service_id = $1 AND stopped_at IS NULL
                     AND heartbeat_at >= ${DB_NOW} - $3)
     SELECT (SELECT count(*) FROM unfinished) AS in_flight,
            (SELECT count(*) FROM unfinished WHERE runner_id = $2) AS mine,
            (SELECT count(*) FROM jobs WHERE service_id = $1 AND state = 'uncertain'
               AND uncertain_at >= ${DB_NOW} - $4) AS uncertain_held,
            (SELECT count(*) FROM live) AS runners,
            (SELECT min(concurrency) FROM live WHERE concurrency > 0) AS bound`,
    [serviceId, runnerId ?? null, lease.leaseMs, lease.uncertainHoldMs],
  );
  const row = rows[0]!;
  return {
    inFlight: toNumber(row.in_flight),
    mine: toNumber(row.mine),
    uncertainHeld: toNumber(row.uncertain_held),
    runners: toNumber(row.runners),
    bound: row.bound ?? 0,
  };
}
