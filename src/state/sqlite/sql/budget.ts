// The ledger of capped runs (migration 7; what it guarantees: BudgetRecords in job-store.ts). The
// charges themselves are written by the intents they go with (job-states.ts, speech.ts).
import type {
  BudgetOwner,
  BudgetSessionRow,
  SpeechCharge,
  SpendTally,
  VideoCharge,
} from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";
import { namedSpeechKey, speechKey } from "../../ledger-rule.js";
import { refundNamedSpeech, refundNamedVideo } from "./named-budgets.js";

/** Part of a submission's intent: in its write, after the claim succeeded. */
export function chargeVideo(c: SqlContext, jobId: number, attempt: number, charge: VideoCharge): void {
  sql(
    c,
    `INSERT INTO spend (session_id, job_id, attempt, model, resolution, seconds, credits, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id, job_id, attempt) WHERE job_id IS NOT NULL DO NOTHING`,
  ).run(
    charge.session,
    jobId,
    attempt,
    charge.model,
    charge.resolution,
    charge.seconds,
    charge.credits,
    c.now(),
  );
}

/** Part of a speech call's intent. */
export function chargeSpeech(c: SqlContext, voiceId: string, text: string, charge: SpeechCharge): void {
  sql(c, "INSERT INTO spend (session_id, speech, seconds, credits, at) VALUES (?, ?, 0, ?, ?)").run(
    charge.session,
    speechKey(voiceId, text),
    charge.credits,
    c.now(),
  );
}

const SESSION_COLUMNS = "id, scope, host, pid, started_at AS startedAt, NULL AS runner";

export function openBudgetSessions(c: SqlContext, scope: string): BudgetSessionRow[] {
  return sql(
    c,
    `SELECT ${SESSION_COLUMNS} FROM budget_sessions WHERE service_id = ? AND scope = ? AND ended_at IS NULL ORDER BY id`,
  ).all(c.serviceId, scope) as BudgetSessionRow[];
}

export function startBudgetSession(c: SqlContext, scope: string, owner: BudgetOwner): BudgetSessionRow {
  return c.turn.writeStatement(
    () =>
      sql(
        c,
        `INSERT INTO budget_sessions (service_id, scope, host, pid, started_at) VALUES (?, ?, ?, ?, ?) RETURNING ${SESSION_COLUMNS}`,
      ).get(c.serviceId, scope, owner.host, owner.pid, c.now()) as BudgetSessionRow,
  );
}

export function takeBudgetSession(c: SqlContext, session: BudgetSessionRow, owner: BudgetOwner): boolean {
  return c.turn.writeStatement(
    () =>
      sql(
        c,
        "UPDATE budget_sessions SET host = ?, pid = ? WHERE id = ? AND host = ? AND pid = ? AND ended_at IS NULL",
      ).run(owner.host, owner.pid, session.id, session.host, session.pid).changes === 1,
  );
}

/**
 * Grouped by whether a price was recorded with the charge: sum(credits) is NULL exactly for the
 * charges made with no price known.
 */
export function budgetSpent(c: SqlContext, id: number): SpendTally {
  const videos = sql(
    c,
    `SELECT model, resolution, sum(seconds) AS seconds, count(*) AS count, sum(credits) AS credits FROM spend
       WHERE session_id = ? AND job_id IS NOT NULL
       GROUP BY model, resolution, credits IS NULL ORDER BY model, resolution, credits IS NULL`,
  ).all(id) as SpendTally["videos"][number][];
  const speech = sql(
    c,
    `SELECT count(*) AS count, sum(credits) AS credits FROM spend WHERE session_id = ? AND speech IS NOT NULL
       GROUP BY credits IS NULL ORDER BY credits IS NULL`,
  ).all(id) as SpendTally["speech"][number][];
  return { videos, speech };
}

export function refundVideo(c: SqlContext, session: number, jobId: number, attempt: number): void {
  c.turn.write(() => {
    sql(c, "DELETE FROM spend WHERE session_id = ? AND job_id = ? AND attempt = ?").run(
      session,
      jobId,
      attempt,
    );
    refundNamedVideo(c, jobId, attempt);
  });
}

export function refundSpeech(c: SqlContext, session: number, voiceId: string, text: string): void {
  c.turn.write(() => {
    sql(
      c,
      "DELETE FROM spend WHERE id = (SELECT max(id) FROM spend WHERE session_id = ? AND speech = ?)",
    ).run(session, speechKey(voiceId, text));
    refundNamedSpeech(c, namedSpeechKey(c.serviceId, voiceId, text));
  });
}

export function endBudgetSession(c: SqlContext, id: number): void {
  c.turn.writeStatement(() => {
    sql(c, "UPDATE budget_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL").run(c.now(), id);
  });
}
