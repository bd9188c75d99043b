// Reviewers' decisions (migration 12; ReviewRecords in job-store.ts). The columns and the decoder
// of a row are both backends' (review-rows.ts).
import { schemaVersion } from "../../../sqlite/migrate.js";
import type { DecisionRow, NewDecision } from "../../job-store.js";
import { DECISION_COLUMNS, DECISIONS_FROM, decisionOf } from "../../review-rows.js";
import { type SqlContext, sql } from "./context.js";

/**
 * Whether the file has the decisions table: a reader (status, plan) does not migrate, and a file an
 * earlier reel wrote has none, so nothing was decided in it.
 */
export function hasDecisions(c: SqlContext): boolean {
  return schemaVersion(c.db) >= 12;
}

/** The stream's fields of a decision (src/events). */
export function decidedDetail(d: NewDecision): string {
  return JSON.stringify({ decision: d.decision, reviewer: d.reviewer });
}

/** In one savepoint of the turn: all or none; each with its event. */
export function recordDecisions(c: SqlContext, decisions: readonly NewDecision[]): DecisionRow[] {
  return c.turn.write(() =>
    decisions.map((d) => {
      const { lastInsertRowid } = sql(
        c,
        `INSERT INTO decisions (service_id, job_key, spec_hash, decision, reviewer, note, decided_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(c.serviceId, d.key, d.specHash, d.decision, d.reviewer, d.note ?? null, c.now());
      c.turn.event(null, "job.decided", decidedDetail(d), d.key);
      return decisionOf(
        sql(c, `SELECT ${DECISION_COLUMNS} ${DECISIONS_FROM} WHERE decisions.id = ?`).get(
          lastInsertRowid,
        ) as Record<string, unknown>,
      );
    }),
  );
}

export function latestDecisions(
  c: SqlContext,
  versions?: readonly { readonly key: string; readonly specHash: string }[],
): DecisionRow[] {
  if (!hasDecisions(c)) return [];
  // One query for every version (a page of 10,000 takes); the table holds what reviewers did, so it
  // stays small beside the jobs. Versions asked for are picked from the result.
  const rows = (
    sql(
      c,
      `SELECT ${DECISION_COLUMNS} ${DECISIONS_FROM}
         WHERE decisions.id IN (
           SELECT max(id) FROM decisions WHERE (? < 0 OR service_id = ?) GROUP BY service_id, job_key, spec_hash)
         ORDER BY decisions.id`,
    ).all(c.serviceId, c.serviceId) as Record<string, unknown>[]
  ).map(decisionOf);
  if (versions === undefined) return rows;
  const wanted = new Set(versions.map((v) => `${v.key}\n${v.specHash}`));
  return rows.filter((row) => wanted.has(`${row.key}\n${row.specHash}`));
}

export function decisionHistory(c: SqlContext, key: string, specHash: string): DecisionRow[] {
  if (!hasDecisions(c)) return [];
  return (
    sql(
      c,
      `SELECT ${DECISION_COLUMNS} ${DECISIONS_FROM}
         WHERE decisions.service_id = ? AND decisions.job_key = ? AND decisions.spec_hash = ? ORDER BY decisions.id`,
    ).all(c.serviceId, key, specHash) as Record<string, unknown>[]
  ).map(decisionOf);
}
