// Reviewers' decisions: src/state/sqlite/sql/decisions.ts's statements, mirrored; the columns and
// the decoder of a row are both backends' (review-rows.ts).
import type pg from "pg";
import type { DecisionRow, NewDecision } from "../../job-store.js";
import { DECISION_COLUMNS, DECISIONS_FROM, decisionOf } from "../../review-rows.js";
import { type PgContext, processName } from "./context.js";

/**
 * One statement (arrays unnested, in their order), with their events: all or none. On `db`, the
 * transaction's client of a write that records them among others (a retake).
 */
export async function recordDecisions(
  c: PgContext,
  decisions: readonly NewDecision[],
  db: pg.ClientBase | pg.Pool = c.pool,
): Promise<DecisionRow[]> {
  if (decisions.length === 0) return [];
  const { rows } = await db.query(
    `WITH made AS (
       INSERT INTO decisions (service_id, job_key, spec_hash, decision, reviewer, note, decided_at)
         SELECT $1::bigint, t.job_key, t.spec_hash, t.decision, t.reviewer, t.note, $7::bigint
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY
             AS t (job_key, spec_hash, decision, reviewer, note, ord)
           ORDER BY t.ord
         RETURNING *),
     noted AS (
       INSERT INTO events (at, kind, detail, job_key, runner)
         SELECT $7::bigint, 'job.decided', json_build_object('decision', decision, 'reviewer', reviewer)::text, job_key, $8
           FROM made ORDER BY id)
     SELECT ${DECISION_COLUMNS} FROM made AS decisions JOIN services ON services.id = decisions.service_id
       ORDER BY decisions.id`,
    [
      c.serviceId,
      decisions.map((d) => d.key),
      decisions.map((d) => d.specHash),
      decisions.map((d) => d.decision),
      decisions.map((d) => d.reviewer),
      decisions.map((d) => d.note ?? null),
      c.now(),
      processName(c),
    ],
  );
  return rows.map(decisionOf);
}

export async function latestDecisions(
  c: PgContext,
  versions?: readonly { readonly key: string; readonly specHash: string }[],
): Promise<DecisionRow[]> {
  const { rows } =
    versions === undefined
      ? await c.pool.query(
          `SELECT DISTINCT ON (decisions.service_id, decisions.job_key, decisions.spec_hash) ${DECISION_COLUMNS}
             ${DECISIONS_FROM}
             WHERE ($1 < 0 OR decisions.service_id = $1)
             ORDER BY decisions.service_id, decisions.job_key, decisions.spec_hash, decisions.id DESC`,
          [c.serviceId],
        )
      : await c.pool.query(
          `SELECT DISTINCT ON (decisions.service_id, decisions.job_key, decisions.spec_hash) ${DECISION_COLUMNS}
             ${DECISIONS_FROM}
             WHERE ($1 < 0 OR decisions.service_id = $1)
               AND (decisions.job_key, decisions.spec_hash) IN (SELECT * FROM unnest($2::text[], $3::text[]))
             ORDER BY decisions.service_id, decisions.job_key, decisions.spec_hash, decisions.id DESC`,
          [c.serviceId, versions.map((v) => v.key), versions.map((v) => v.specHash)],
        );
  return rows.map(decisionOf).sort((a, b) => a.id - b.id);
}

export async function decisionHistory(c: PgContext, key: string, specHash: string): Promise<DecisionRow[]> {
  const { rows } = await c.pool.query(
    `SELECT ${DECISION_COLUMNS} ${DECISIONS_FROM}
       WHERE decisions.service_id = $1 AND decisions.job_key = $2 AND decisions.spec_hash = $3
       ORDER BY decisions.id`,
    [c.serviceId, key, specHash],
  );
  return rows.map(decisionOf);
}
