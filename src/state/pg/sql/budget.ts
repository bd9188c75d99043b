// The ledger of capped runs on PostgreSQL: src/state/sql/budget.ts's statements, which it mirrors.
// The charges go with their intents, in the claim's transaction and the speech intent's statement
// (fleet.ts: claimJob, startSpeech).
import { speechKey } from "../../sql/budget.js";
import type { BudgetOwner, BudgetSessionRow, SpendTally } from "../../job-store.js";
import { type PgContext, toNumber } from "./context.js";

interface SessionColumns {
  id: string;
  scope: string;
  host: string;
  pid: number;
  started_at: string;
}

const SESSION_COLUMNS = "id, scope, host, pid, started_at";

function sessionOf(row: SessionColumns): BudgetSessionRow {
  return {
    id: toNumber(row.id),
    scope: row.scope,
    host: row.host,
    pid: row.pid,
    startedAt: toNumber(row.started_at),
  };
}

export async function openBudgetSessions(c: PgContext, scope: string): Promise<BudgetSessionRow[]> {
  const { rows } = await c.pool.query<SessionColumns>(
    `SELECT ${SESSION_COLUMNS} FROM budget_sessions WHERE service_id = $1 AND scope = $2 AND ended_at IS NULL ORDER BY id`,
    [c.serviceId, scope],
  );
  return rows.map(sessionOf);
}

export async function startBudgetSession(
  c: PgContext,
  scope: string,
  owner: BudgetOwner,
): Promise<BudgetSessionRow> {
  const { rows } = await c.pool.query<SessionColumns>(
    `INSERT INTO budget_sessions (service_id, scope, host, pid, started_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${SESSION_COLUMNS}`,
    [c.serviceId, scope, owner.host, owner.pid, c.now()],
  );
  return sessionOf(rows[0]!);
}

export async function takeBudgetSession(
  c: PgContext,
  id: number,
  fromPid: number,
  owner: BudgetOwner,
): Promise<boolean> {
  const { rowCount } = await c.pool.query(
    "UPDATE budget_sessions SET host = $1, pid = $2 WHERE id = $3 AND pid = $4 AND ended_at IS NULL",
    [owner.host, owner.pid, id, fromPid],
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
