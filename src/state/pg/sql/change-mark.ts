// The change mark of the review records (ReviewRecords.changeMark in job-store.ts), as
// src/state/sqlite/sql/change-mark.ts says: one round trip of aggregates, no rows.
import type { PgContext } from "./context.js";

export async function changeMark(c: PgContext): Promise<string> {
  // Sums as text: past 2^53 a JavaScript number would round two sums to one.
  const { rows } = await c.pool.query<{ mark: string }>(
    `SELECT concat_ws('/',
       (SELECT concat_ws(':', count(*), coalesce(max(id), 0), coalesce(sum(updated_at), 0)::text, coalesce(sum(attempts), 0))
          FROM jobs WHERE ($1 < 0 OR service_id = $1)),
       (SELECT concat_ws(':', count(*), coalesce(max(id), 0)) FROM decisions WHERE ($1 < 0 OR service_id = $1)),
       (SELECT concat_ws(':', count(*), coalesce(max(id), 0), count(withdrawn_at))
          FROM retakes WHERE ($1 < 0 OR service_id = $1))) AS mark`,
    [c.serviceId],
  );
  return rows[0]!.mark;
}
