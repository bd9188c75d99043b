// Named budgets on PostgreSQL: src/state/sqlite/sql/named-budgets.ts's statements, which it mirrors.
// `spendFromBudget` runs in the transaction of the intent that spends (fleet.ts: claimJob,
// startSpeech). Its UPDATE's WHERE is the check: under READ COMMITTED, a second runner's UPDATE of the
// same row waits for the first's commit and then evaluates the caps against the row as committed, so
// no interleaving of runners passes a cap.
import type pg from "pg";
import { BudgetReachedError, BUDGET_NOTICE_KIND } from "../../named-budget.js";
import type { NamedBudget, NamedBudgetChange, NamedCharge } from "../../job-store.js";
import { BUDGET_TOLERANCE } from "../../ledger-rule.js";
import {
  noticedAfterSetSql,
  refusalNotice,
  SHARE_COLUMNS,
  type ShareRow,
  sharesToTell,
} from "../../budget-share-rule.js";
import { type PgContext, toNumber } from "./context.js";

const COLUMNS =
  "id, name, max_seconds, max_credits, prices_file, prices_json, spent_seconds, spent_credits, created_at, updated_at";

interface Row {
  id: string;
  name: string;
  max_seconds: number | null;
  max_credits: number | null;
  prices_file: string | null;
  prices_json: string | null;
  spent_seconds: number;
  spent_credits: number;
  created_at: string;
  updated_at: string;
}

function budgetOf(row: Row): NamedBudget {
  return {
    id: toNumber(row.id),
    name: row.name,
    maxSeconds: row.max_seconds,
    maxCredits: row.max_credits,
    prices:
      row.prices_file !== null && row.prices_json !== null
        ? { file: row.prices_file, json: row.prices_json }
        : null,
    spentSeconds: row.spent_seconds,
    spentCredits: row.spent_credits,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

export async function findBudget(c: PgContext, name: string): Promise<NamedBudget | undefined> {
  const { rows } = await c.pool.query<Row>(`SELECT ${COLUMNS} FROM budgets WHERE name = $1`, [name]);
  return rows[0] && budgetOf(rows[0]);
}

export async function listBudgets(c: PgContext): Promise<NamedBudget[]> {
  const { rows } = await c.pool.query<Row>(`SELECT ${COLUMNS} FROM budgets ORDER BY name`);
  return rows.map(budgetOf);
}

export async function setBudget(c: PgContext, name: string, change: NamedBudgetChange): Promise<NamedBudget> {
  const now = c.now();
  const { rows } = await c.pool.query<Row>(
    `INSERT INTO budgets AS b (name, max_seconds, max_credits, prices_file, prices_json, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (name) DO UPDATE SET
         max_seconds = coalesce(excluded.max_seconds, b.max_seconds),
         max_credits = coalesce(excluded.max_credits, b.max_credits),
         prices_file = coalesce(excluded.prices_file, b.prices_file),
         prices_json = coalesce(excluded.prices_json, b.prices_json),
         noticed_percent = ${noticedAfterSetSql("b.", "least")},
         updated_at = excluded.updated_at
       RETURNING ${COLUMNS}`,
    [
      name,
      change.maxSeconds ?? null,
      change.maxCredits ?? null,
      change.prices?.file ?? null,
      change.prices?.json ?? null,
      now,
    ],
  );
  return budgetOf(rows[0]!);
}

/**
 * Spends `charge` from its budget, in the caller's transaction on `client` (see above): recorded once
 * per (job, attempt), and only if it fits. Throws BudgetReachedError when it does not; the caller's
 * transaction is then rolled back whole.
 */
export async function spendFromBudget(
  client: pg.ClientBase,
  now: number,
  charge: NamedCharge,
  what: { readonly jobId: number; readonly attempt: number } | { readonly speech: string },
  runnerId: number,
): Promise<void> {
  const recorded =
    "jobId" in what
      ? await client.query(
          `INSERT INTO budget_charges (budget_id, job_id, attempt, seconds, credits, at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (budget_id, job_id, attempt) WHERE job_id IS NOT NULL DO NOTHING`,
          [charge.budget, what.jobId, what.attempt, charge.seconds, charge.credits, now],
        )
      : await client.query(
          "INSERT INTO budget_charges (budget_id, speech, seconds, credits, at) VALUES ($1, $2, $3, $4, $5)",
          [charge.budget, what.speech, charge.seconds, charge.credits, now],
        );
  // Met again (a claim whose refund a crash cut off, made again): spent already.
  if (recorded.rowCount === 0) return;
  // A second runner's UPDATE waits for the first's commit and reads back the row as committed, the
  // shares it told included: each share is told by one runner.
  const moved = await client.query<ShareRow>(
    `UPDATE budgets SET spent_seconds = spent_seconds + $2, spent_credits = spent_credits + $3, updated_at = $4
       WHERE id = $1 AND (max_seconds IS NULL OR spent_seconds + $2 <= max_seconds + ${BUDGET_TOLERANCE})
         AND (max_credits IS NULL OR spent_credits + $3 <= max_credits + ${BUDGET_TOLERANCE})
       RETURNING ${SHARE_COLUMNS}`,
    [charge.budget, charge.seconds, charge.credits, now],
  );
  if (moved.rowCount === 1) {
    await tellShares(client, now, runnerId, moved.rows[0]!);
    return;
  }
  const { rows } = await client.query<Row>(`SELECT ${COLUMNS} FROM budgets WHERE id = $1`, [charge.budget]);
  throw new BudgetReachedError(budgetOf(rows[0]!), charge);
}

/** Gives back the named charge of job `jobId`'s attempt `attempt`, if any: one statement, so once. */
export async function refundNamedVideo(c: PgContext, jobId: number, attempt: number): Promise<void> {
  await refund(c, "SELECT id FROM budget_charges WHERE job_id = $1 AND attempt = $2", [jobId, attempt]);
}

/** Gives back the last named charge of this speech, if any. */
export async function refundNamedSpeech(c: PgContext, speech: string): Promise<void> {
  await refund(c, "SELECT max(id) FROM budget_charges WHERE speech = $1", [speech]);
}

async function refund(c: PgContext, which: string, values: unknown[]): Promise<void> {
  await c.pool.query(
    `WITH gone AS (DELETE FROM budget_charges WHERE id IN (${which}) RETURNING budget_id, seconds, credits),
       total AS (SELECT budget_id, sum(seconds) AS seconds, sum(credits) AS credits FROM gone GROUP BY budget_id)
     UPDATE budgets SET spent_seconds = spent_seconds - total.seconds, spent_credits = spent_credits - total.credits,
                        updated_at = $${values.length + 1}
       FROM total WHERE budgets.id = total.budget_id`,
    [...values, c.now()],
  );
}

/** Records the shares a spend passed, in its transaction (the budget's row is locked until it commits). */
async function tellShares(
  client: pg.ClientBase,
  now: number,
  runnerId: number,
  row: ShareRow,
): Promise<void> {
  const told = sharesToTell(row);
  if (told.length === 0) return;
  await client.query("UPDATE budgets SET noticed_percent = $2 WHERE id = $1", [
    row.id,
    told[told.length - 1]!.percent,
  ]);
  await client.query(
    `INSERT INTO events (at, runner_id, kind, detail)
       SELECT $1, $2, $3, d FROM unnest($4::text[]) WITH ORDINALITY AS t(d, i) ORDER BY i`,
    [now, runnerId, BUDGET_NOTICE_KIND, told.map((notice) => JSON.stringify(notice))],
  );
}

/**
 * The handler of a spending transaction's failure: a charge the named budget refused claims its last
 * share's notice (one statement: claimed and recorded together), unless some runner told it before.
 * Rethrows the failure.
 */
export function noticingRefusal(c: PgContext, runnerId: number): (error: unknown) => Promise<never> {
  return async (error) => {
    if (error instanceof BudgetReachedError) {
      const notice = refusalNotice(error.budget, error.charge);
      await c.pool
        .query(
          `WITH claimed AS (
             UPDATE budgets SET noticed_percent = $2 WHERE id = $1 AND noticed_percent < $2 RETURNING id)
           INSERT INTO events (at, runner_id, kind, detail) SELECT $3, $4, $5, $6 FROM claimed`,
          [error.budget.id, notice.percent, c.now(), runnerId, BUDGET_NOTICE_KIND, JSON.stringify(notice)],
        )
        .catch(() => {}); // the store unreachable: the refusal is what matters
    }
    throw error;
  };
}
