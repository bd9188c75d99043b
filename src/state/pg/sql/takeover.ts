// The takeover of the work of runners gone or silent past their lease, on the shared store (the
// rules: fleet.ts, Takeover).
import type { LostWhy, TakeOver } from "../../job-store.js";
import { toNumber } from "./context.js";
import { DB_NOW } from "./runners.js";
import { fence, fleetTransaction, type FleetContext, GONE_RUNNERS, leaseLostError } from "./fleet.js";

/**
 * Marks lost the runners silent past their lease (never this one), and sorts the work this service's
 * gone runners (lost, or stopped with work left) held. One transaction; safe to run by every runner
 * at any time (each step matches only rows no live runner holds).
 */
export async function takeOverLost(c: FleetContext): Promise<TakeOver> {
  const dead = await goneHere(c);
  const result = await fleetTransaction(c, async (client) => {
    // A lost runner takes nothing over; and this one's own silence (an outage) is recorded first.
    if ((await client.query(fence(c), [c.runnerId])).rowCount !== 1) return "lost-lease" as const;
    const now = c.now();
    const { rows: lost } = await client.query<{ id: string; host: string; pid: number; lost_why: LostWhy }>(
      `UPDATE runners r SET stopped_at = ${DB_NOW}, lost_at = ${DB_NOW}, taken_by = $1,
              lost_why = CASE WHEN r.id = ANY ($3::bigint[]) THEN 'gone' ELSE 'silent' END
         WHERE r.stopped_at IS NULL AND r.id <> $1
           AND (r.id = ANY ($3::bigint[]) OR (r.heartbeat_at < ${DB_NOW} - $2 AND ${SILENT_WHILE_REACHABLE}))
         RETURNING r.id, r.host, r.pid, r.lost_why`,
      [c.runnerId, c.lease.leaseMs, dead],
    );
    const holder = `coalesce((SELECT 'runner ' || r.id || ' on ' || r.host || ' (pid ' || r.pid || ')' FROM runners r WHERE r.id = jobs.runner_id), 'its runner')`;
    const uncertain = await client.query(
      `WITH found AS (
         UPDATE jobs SET state = 'uncertain', updated_at = $2,
                error = ${holder} || ' stopped while this job was being submitted; the service may have received it'
           WHERE service_id = $1 AND state = 'submitting' AND (runner_id IS NULL OR runner_id IN (${GONE_RUNNERS}))
           RETURNING id)
       INSERT INTO events (at, job_id, runner_id, kind, detail)
         SELECT $2::bigint, id, $3, 'uncertain', 'interrupted submission, taken over' FROM found`,
      [c.serviceId, now, c.runnerId],
    );
    const released = await client.query(
      `UPDATE jobs SET runner_id = NULL
         WHERE service_id = $1 AND state = 'submitted' AND runner_id IN (${GONE_RUNNERS})`,
      [c.serviceId],
    );
    // Every task no runner follows: released now, or before (by this or another takeover, a runner
    // that stopped, a late answer), for any live runner to follow.
    const { rows: unheld } = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM jobs WHERE service_id = $1 AND state = 'submitted' AND runner_id IS NULL",
      [c.serviceId],
    );
    const speech = await client.query(
      `UPDATE speech SET state = 'uncertain', updated_at = $2,
              error = 'the runner making this speech stopped before its answer was recorded'
         WHERE service_id = $1 AND state = 'creating' AND (runner_id IS NULL OR runner_id IN (${GONE_RUNNERS}))`,
      [c.serviceId, now],
    );
    const uploads = await client.query(
      `DELETE FROM upload_intents
         WHERE service_id = $1 AND (runner_id IS NULL OR runner_id IN (${GONE_RUNNERS}))`,
      [c.serviceId],
    );
    return {
      lost: lost.map((row) => ({ id: toNumber(row.id), host: row.host, pid: row.pid, why: row.lost_why })),
      uncertain: uncertain.rowCount ?? 0,
      released: released.rowCount ?? 0,
      unheld: toNumber(unheld[0]?.n ?? 0),
      speech: speech.rowCount ?? 0,
      uploads: uploads.rowCount ?? 0,
    };
  });
  if (result === "lost-lease") throw await leaseLostError(c, "It takes no work over.");
  return result;
}

/**
 * A runner `r` is taken for lost only if its silence was heard: some other runner `s` (this one, or
 * any other, stopped since or not) was heard without a gap for a whole lease after r's last beat
 * (s.connected_at: see runners.ts aliveNow). A database that restarted, or a network cut that kept
 * every runner away, silences the whole fleet at once: nobody heard that, and nobody is taken over
 * when it comes back; the runners reconnect and go on. $2 is the lease.
 */
const SILENT_WHILE_REACHABLE = `EXISTS (SELECT 1 FROM runners s WHERE s.id <> r.id
    AND s.heartbeat_at - greatest(r.heartbeat_at, s.connected_at) >= $2)`;

/**
 * The runners of this pid space (this boot, this PID namespace: see ../../pid-space.ts) that have not
 * stopped but whose process is gone (killed with kill -9, or crashed): lost at once, without waiting
 * out their lease, so that a rerun on the machine of a run that was killed goes on at once. Only
 * where the process surely is gone (ESRCH); a process alive (or another user's: EPERM) keeps its
 * lease. Never by host name: machines (or containers) that share one see nothing of each other's
 * processes, and a live runner there must not be taken for gone; the lease decides for them, and
 * for every runner where the pid space is unknown.
 */
async function goneHere(c: FleetContext): Promise<number[]> {
  if (c.pidSpace === "") return [];
  const { rows } = await c.pool.query<{ id: string; pid: number }>(
    "SELECT id, pid FROM runners WHERE pid_space = $1 AND stopped_at IS NULL AND id <> $2",
    [c.pidSpace, c.runnerId],
  );
  return rows.filter((row) => !processAlive(row.pid)).map((row) => toNumber(row.id));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
