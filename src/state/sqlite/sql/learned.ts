// What reel learned of the service (migration 8; LearnedRecords in job-store.ts).
import { type SqlContext, sql } from "./context.js";

export function readRunTimes(c: SqlContext): string | undefined {
  const row = sql(c, "SELECT run_times FROM learned WHERE service_id = ?").get(c.serviceId) as
    { run_times: string } | undefined;
  return row?.run_times;
}

export function writeRunTimes(c: SqlContext, data: string): void {
  c.turn.writeStatement(() => {
    sql(
      c,
      `INSERT INTO learned (service_id, run_times, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (service_id) DO UPDATE SET run_times = excluded.run_times, updated_at = excluded.updated_at`,
    ).run(c.serviceId, data, c.now());
  });
}
