// Reviewers' decisions (migration 12; ReviewRecords in job-store.ts).
import { schemaVersion } from "../../../sqlite/migrate.js";
import type { DecisionRow, NewDecision } from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";

/**
 * Whether the file has the decisions table: a reader (status, plan) does not migrate, and a file an
 * earlier reel wrote has none, so nothing was decided in it.
 */
export function hasDecisions(c: SqlContext): boolean {
  return schemaVersion(c.db) >= 12;
}

const DECISION_COLUMNS =
  "decisions.id, services.base_url, decisions.job_key, decisions.spec_hash, decisions.decision, decisions.reviewer, decisions.note, decisions.decided_at";
const FROM = "FROM decisions JOIN services ON services.id = decisions.service_id";

type Values = [number, string, string, string, DecisionRow["decision"], string, string | null, number];

function decisionOf(v: Values): DecisionRow {
  return {
    id: v[0],
    baseUrl: v[1],
    key: v[2],
    specHash: v[3],
    decision: v[4],
    reviewer: v[5],
    note: v[6],
    decidedAt: v[7],
  };
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
        sql(c, `SELECT ${DECISION_COLUMNS} ${FROM} WHERE decisions.id = ?`, true).get(
          lastInsertRowid,
        ) as Values,
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
      `SELECT ${DECISION_COLUMNS} ${FROM}
         WHERE decisions.id IN (
           SELECT max(id) FROM decisions WHERE (? < 0 OR service_id = ?) GROUP BY service_id, job_key, spec_hash)
         ORDER BY decisions.id`,
      true,
    ).all(c.serviceId, c.serviceId) as Values[]
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
      `SELECT ${DECISION_COLUMNS} ${FROM}
         WHERE decisions.service_id = ? AND decisions.job_key = ? AND decisions.spec_hash = ? ORDER BY decisions.id`,
      true,
    ).all(c.serviceId, key, specHash) as Values[]
  ).map(decisionOf);
}
