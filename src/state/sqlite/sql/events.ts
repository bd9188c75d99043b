// The event stream's reads and its bound (src/events): the rows the state changes and notes wrote.
import type { StoredEvent } from "../../stored-event.js";
import type { EventQuery } from "../../job-store.js";
import { schemaVersion } from "../../../sqlite/migrate.js";
import { type SqlContext, sql } from "./context.js";

/**
 * Rows of earlier reels name no job key (read through the job's row) and no task id (a submission's
 * own detail is its task id).
 */
const COLUMNS = `e.id AS id, e.at AS at, e.kind AS kind, e.detail AS detail,
  coalesce(e.job_key, j.job_key) AS jobKey,
  coalesce(e.task_id, CASE WHEN e.kind IN ('submitted', 'late-answer') THEN e.detail END) AS taskId,
  e.runner AS runner`;

/** A file an earlier reel wrote, read without migrating it (`reel events` is a reader). */
const EARLIER_COLUMNS = COLUMNS.replace("e.job_key", "NULL")
  .replace("e.task_id", "NULL")
  .replace("e.runner AS", "NULL AS");

export function readEvents(c: SqlContext, query: EventQuery, runner?: string): StoredEvent[] {
  const { afterId = 0, since, within, limit = 1000 } = query;
  const where = [
    "e.id > ?",
    ...(since !== undefined ? ["e.at >= ?"] : []),
    ...(runner !== undefined ? ["e.runner = ?"] : []),
    ...(within !== undefined ? [`(${within.map(() => "e.id BETWEEN ? AND ?").join(" OR ") || "0"})`] : []),
  ];
  const params = [
    afterId,
    ...(since !== undefined ? [since] : []),
    ...(runner !== undefined ? [runner] : []),
    ...(within ?? []).flat(),
  ];
  return sql(
    c,
    // A writer's own events (`runner`): its file is migrated.
    `SELECT ${runner !== undefined || schemaVersion(c.db) >= 15 ? COLUMNS : EARLIER_COLUMNS} FROM events e LEFT JOIN jobs j ON j.id = e.job_id
       WHERE ${where.join(" AND ")} ORDER BY e.id LIMIT ${Math.floor(limit)}`,
  ).all(...params) as StoredEvent[];
}

export function lastEventId(c: SqlContext): number {
  return (sql(c, "SELECT coalesce(max(id), 0) AS id FROM events").get() as { id: number }).id;
}

/**
 * Deletes the rows before the first recorded at or after `before`. By id, not by time: ids grow with
 * time, and the events table needs no index on `at` (one more B-tree written per event).
 */
export function pruneEvents(c: SqlContext, before: number): number {
  return c.turn.writeStatement(
    () =>
      sql(
        c,
        `DELETE FROM events WHERE id < coalesce(
           (SELECT id FROM events WHERE at >= ? ORDER BY id LIMIT 1),
           (SELECT max(id) + 1 FROM events))`,
      ).run(before).changes,
  );
}
