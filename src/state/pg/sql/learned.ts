// What the runners learned of the service: src/state/sqlite/sql/learned.ts's statements, mirrored.
import type { PgContext } from "./context.js";

export async function readRunTimes(c: PgContext): Promise<string | undefined> {
  const { rows } = await c.pool.query<{ run_times: string }>(
    "SELECT run_times FROM learned WHERE service_id = $1",
    [c.serviceId],
  );
  return rows[0]?.run_times;
}

export async function writeRunTimes(c: PgContext, data: string): Promise<void> {
  await c.pool.query(
    `INSERT INTO learned (service_id, run_times, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (service_id) DO UPDATE SET run_times = excluded.run_times, updated_at = excluded.updated_at`,
    [c.serviceId, data, c.now()],
  );
}
