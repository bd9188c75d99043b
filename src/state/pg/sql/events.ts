// The event stream's notes, reads and bound on PostgreSQL, as ../../sql/events.ts on a state file.
import type { StoredEvent } from "../../stored-event.js";
import type { EventQuery } from "../../job-store.js";
import { type PgContext, toNumber } from "./context.js";

/** As the state file's: rows of earlier reels (and the fleet's claims) are read through their job and runner. */
const SELECT = `SELECT e.id, e.at, e.kind, e.detail,
    coalesce(e.job_key, j.job_key) AS job_key,
    coalesce(e.task_id, CASE WHEN e.kind IN ('submitted', 'late-answer') THEN e.detail END) AS task_id,
    coalesce(e.runner, r.host || ':' || r.pid) AS runner
  FROM events e LEFT JOIN jobs j ON j.id = e.job_id LEFT JOIN runners r ON r.id = e.runner_id`;

interface Row {
  id: string;
  at: string;
  kind: string;
  detail: string | null;
  job_key: string | null;
  task_id: string | null;
  runner: string | null;
}

export async function readEvents(c: PgContext, query: EventQuery, runnerId?: number): Promise<StoredEvent[]> {
  const { afterId = 0, since, within, limit = 1000 } = query;
  const values: unknown[] = [afterId];
  const where = ["e.id > $1"];
  if (since !== undefined) where.push(`e.at >= $${values.push(since)}`);
  if (runnerId !== undefined) where.push(`e.runner_id = $${values.push(runnerId)}`);
  if (within !== undefined) {
    const ranges = within.map(([from, to]) => `e.id BETWEEN $${values.push(from)} AND $${values.push(to)}`);
    where.push(`(${ranges.join(" OR ") || "false"})`);
  }
  const { rows } = await c.pool.query<Row>(
    `${SELECT} WHERE ${where.join(" AND ")} ORDER BY e.id LIMIT ${Math.floor(limit)}`,
    values,
  );
  return rows.map((row) => ({
    id: toNumber(row.id),
    at: toNumber(row.at),
    kind: row.kind,
    detail: row.detail,
    jobKey: row.job_key,
    taskId: row.task_id,
    runner: row.runner,
  }));
}

/**
 * The transactions open now, as the current snapshot has them: every one below `oldest` has ended,
 * and every one that begins after has an id at or above `next`.
 */
export async function openTransactions(c: PgContext): Promise<{ oldest: bigint; next: bigint }> {
  const { rows } = await c.pool.query<{ oldest: string; next: string }>(
    `SELECT pg_snapshot_xmin(s)::text AS oldest, pg_snapshot_xmax(s)::text AS next
       FROM pg_current_snapshot() AS s`,
  );
  return { oldest: BigInt(rows[0]!.oldest), next: BigInt(rows[0]!.next) };
}

export async function lastEventId(c: PgContext): Promise<number> {
  const { rows } = await c.pool.query<{ id: string }>("SELECT coalesce(max(id), 0) AS id FROM events");
  return toNumber(rows[0]!.id);
}

/** A note: [at, kind, detail, job key]. */
export type Note = readonly [number, string, string | null, string | null];

/** Inserts `notes` in one statement, in their order. */
export async function insertNotes(
  c: PgContext,
  notes: readonly Note[],
  runnerId: number | null,
  runner: string,
): Promise<void> {
  await c.pool.query(
    `INSERT INTO events (at, runner_id, runner, kind, detail, job_key)
       SELECT (n ->> 0)::bigint, $1::bigint, $2, n ->> 1, n ->> 2, n ->> 3
         FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(n, i) ORDER BY i`,
    [runnerId, runner, JSON.stringify(notes)],
  );
}

/** As the state file's: by id, so that no index on `at` is needed. */
export async function pruneEvents(c: PgContext, before: number): Promise<number> {
  const { rowCount } = await c.pool.query(
    `DELETE FROM events WHERE id < coalesce(
       (SELECT id FROM events WHERE at >= $1 ORDER BY id LIMIT 1),
       (SELECT max(id) + 1 FROM events))`,
    [before],
  );
  return rowCount ?? 0;
}
