// The ledger of capped runs on PostgreSQL: src/state/sqlite/sql/budget.ts's statements, which it mirrors.
// The charges go with their intents, in the claim's statement and the speech intent's statement
// (claims.ts: claimJob; fleet.ts: startSpeech).
import { speechKey } from "../../ledger-rule.js";
import type { BudgetOwner, BudgetSessionRow, OpenBudgetSession, SpendTally } from "../../job-store.js";
import { type PgContext, toNumber } from "./context.js";
import type { FleetContext } from "./fleet.js";

interface SessionColumns {
  id: string;
  scope: string;
  host: string;
  pid: number;
  started_at: string;
  runner_id: string | null;
}

const SESSION_COLUMNS = "s.id, s.scope, s.host, s.pid, s.started_at, s.runner_id";

function sessionOf(row: SessionColumns): BudgetSessionRow {
  return {
    id: toNumber(row.id),
    scope: row.scope,
    host: row.host,
    pid: row.pid,
    startedAt: toNumber(row.started_at),
    runner: row.runner_id === null ? null : toNumber(row.runner_id),
  };
}

/**
 * The open sessions of `scope`, each with whether its runner runs: this one's (`here`); stopped,
 * marked lost, or none known (`gone`); else when it was last heard (its heartbeat).
 */
export async function openBudgetSessions(c: FleetContext, scope: string): Promise<OpenBudgetSession[]> {
  const { rows } = await c.pool.query<SessionColumns & { gone: boolean; heard_at: string | null }>(
    `SELECT ${SESSION_COLUMNS}, r.stopped_at IS NOT NULL OR r.id IS NULL AS gone, r.heartbeat_at AS heard_at
       FROM budget_sessions s LEFT JOIN runners r ON r.id = s.runner_id
       WHERE s.service_id = $1 AND s.scope = $2 AND s.ended_at IS NULL ORDER BY s.id`,
    [c.serviceId, scope],
  );
  return rows.map((row) => {
    const session = sessionOf(row);
    const runs =
      session.runner === c.runnerId
        ? ("here" as const)
        : row.gone
          ? ("gone" as const)
          : { heardAt: toNumber(row.heard_at!) };
    return { ...session, runs };
  });
}

export async function startBudgetSession(
  c: FleetContext,
  scope: string,
  owner: BudgetOwner,
): Promise<BudgetSessionRow> {
  const { rows } = await c.pool.query<SessionColumns>(
    `INSERT INTO budget_sessions AS s (service_id, scope, host, pid, started_at, runner_id) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${SESSION_COLUMNS}`,
    [c.serviceId, scope, owner.host, owner.pid, c.now(), c.runnerId],
  );
  return sessionOf(rows[0]!);
}

/** A compare-and-set on the session's runner; taken again by this runner, it is still taken (a retry). */
export async function takeBudgetSession(
  c: FleetContext,
  session: BudgetSessionRow,
  owner: BudgetOwner,
): Promise<boolean> {
  const { rowCount } = await c.pool.query(
    `UPDATE budget_sessions SET host = $1, pid = $2, runner_id = $3
       WHERE id = $4 AND (runner_id IS NOT DISTINCT FROM $5 OR runner_id = $3) AND ended_at IS NULL`,
    [owner.host, owner.pid, c.runnerId, session.id, session.runner],
  );
  return rowCount === 1;
}

/** As the state file's (sql/budget.ts): grouped by whether a price was recorded with the charge. */
export async function budgetSpent(c: PgContext, id: number): Promise<SpendTally> {
  const videos = await c.pool.query<{
    model: string;
    resolution: string | null;
    seconds: number;
    count: string;
    credits: number | null;
  }>(
    `SELECT model, resolution, sum(seconds) AS seconds, count(*) AS count, sum(credits) AS credits FROM spend
       WHERE session_id = $1 AND job_id IS NOT NULL
       GROUP BY model, resolution, credits IS NULL ORDER BY model, resolution, credits IS NULL`,
    [id],
  );
  const speech = await c.pool.query<{ count: string; credits: number | null }>(
    `SELECT count(*) AS count, sum(credits) AS credits FROM spend WHERE session_id = $1 AND speech IS NOT NULL
       GROUP BY credits IS NULL ORDER BY credits IS NULL`,
    [id],
  );
  const credits = (n: number | null): number | null => (n === null ? null : Number(n));
  return {
    videos: videos.rows.map((row) => ({
      ...row,
      seconds: Number(row.seconds),
      count: toNumber(row.count),
      credits: credits(row.credits),
    })),
    speech: speech.rows.map((row) => ({ count: toNumber(row.count), credits: credits(row.credits) })),
  };
}

export async function refundVideo(
  c: PgContext,
  session: number,
  jobId: number,
  attempt: number,
): Promise<void> {
  await c.pool.query("DELETE FROM spend WHERE session_id = $1 AND job_id = $2 AND attempt = $3", [
    session,
    jobId,
    attempt,
  ]);
}

export async function refundSpeech(
  c: PgContext,
  session: number,
  voiceId: string,
  text: string,
): Promise<void> {
  await c.pool.query(
    "DELETE FROM spend WHERE id = (SELECT max(id) FROM spend WHERE session_id = $1 AND speech = $2)",
    [session, speechKey(voiceId, text)],
  );
}

export async function endBudgetSession(c: PgContext, id: number): Promise<void> {
  await c.pool.query("UPDATE budget_sessions SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL", [
    c.now(),
    id,
  ]);
}
