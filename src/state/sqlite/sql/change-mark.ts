// The change mark of the review records (ReviewRecords.changeMark in job-store.ts). Every write that
// the review page shows moves one of the aggregates: a job added or forgotten (count, max id), a
// job's state, file or error changed (its updated_at, which only grows: the sum moves), an attempt
// given back (the sum of attempts), a decision (max id), a retake queued or withdrawn.
// A job written twice within one millisecond, a check falling between, shows at the next change.
import { schemaVersion } from "../../../sqlite/migrate.js";
import { type SqlContext, sql } from "./context.js";

export function changeMark(c: SqlContext): string {
  const version = schemaVersion(c.db);
  // Sums as text: past 2^53 a JavaScript number would round two sums to one.
  const parts = [
    `SELECT count(*) || ':' || ifnull(max(id), 0) || ':' || ifnull(sum(updated_at), 0) || ':' || ifnull(sum(attempts), 0)
       FROM jobs WHERE (? < 0 OR service_id = ?)`,
  ];
  // A reader does not migrate: a file an earlier reel wrote has no decisions (12) or retakes (13).
  if (version >= 12)
    parts.push(`SELECT count(*) || ':' || ifnull(max(id), 0) FROM decisions WHERE (? < 0 OR service_id = ?)`);
  if (version >= 13)
    parts.push(
      `SELECT count(*) || ':' || ifnull(max(id), 0) || ':' || count(withdrawn_at) FROM retakes WHERE (? < 0 OR service_id = ?)`,
    );
  return parts.map((query) => (sql(c, query, true).get(c.serviceId, c.serviceId) as [string])[0]).join("/");
}
