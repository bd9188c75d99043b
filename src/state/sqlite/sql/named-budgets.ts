// Named budgets on the state file (migration 14; what they guarantee: NamedBudgetRecords in
// job-store.ts). `spendFromBudget` is the check a claim and a speech intent make inside their own
// write: the state file's transactions are IMMEDIATE, so the budget's row read and moved there is
// the one every other writer (a `reel budget set` beside the run) sees next.
import { BudgetReachedError, BUDGET_NOTICE_KIND, type NamedBudgetNotice } from "../../named-budget.js";
import type { NamedBudget, NamedBudgetChange, NamedCharge } from "../../job-store.js";
import { BUDGET_TOLERANCE } from "../../ledger-rule.js";
import {
  refusalNotice,
  setBudgetSql,
  setBudgetValues,
  SHARE_COLUMNS,
  type ShareRow,
  sharesToTell,
} from "../../budget-share-rule.js";
import { type SqlContext, sql } from "./context.js";

const COLUMNS = `id, name, max_seconds AS maxSeconds, max_credits AS maxCredits, prices_file, prices_json,
  spent_seconds AS spentSeconds, spent_credits AS spentCredits, created_at AS createdAt, updated_at AS updatedAt`;

type Row = Omit<NamedBudget, "prices"> & { prices_file: string | null; prices_json: string | null };

function budgetOf(row: Row): NamedBudget {
  const { prices_file: file, prices_json: json, ...rest } = row;
  return { ...rest, prices: file !== null && json !== null ? { file, json } : null };
}

export function findBudget(c: SqlContext, name: string): NamedBudget | undefined {
  const row = sql(c, `SELECT ${COLUMNS} FROM budgets WHERE name = ?`).get(name) as Row | undefined;
  return row && budgetOf(row);
}

export function listBudgets(c: SqlContext): NamedBudget[] {
  return (sql(c, `SELECT ${COLUMNS} FROM budgets ORDER BY name`).all() as Row[]).map(budgetOf);
}

export function setBudget(c: SqlContext, name: string, change: NamedBudgetChange): NamedBudget {
  const statement = sql(
    c,
    setBudgetSql(() => "?", "min", COLUMNS),
  );
  return budgetOf(statement.get(...setBudgetValues(name, change, c.now())) as Row);
}

/**
 * Spends `charge` from its budget, inside the caller's write: recorded once per (job, attempt) or
 * speech call, and only if it fits under the caps as they are now. Throws BudgetReachedError when it
 * does not (the caller's write is then undone whole).
 */
export function spendFromBudget(
  c: SqlContext,
  charge: NamedCharge,
  what: { readonly jobId: number; readonly attempt: number } | { readonly speech: string },
): void {
  const at = c.now();
  const recorded =
    "jobId" in what
      ? sql(
          c,
          `INSERT INTO budget_charges (budget_id, job_id, attempt, seconds, credits, at) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (budget_id, job_id, attempt) WHERE job_id IS NOT NULL DO NOTHING`,
        ).run(charge.budget, what.jobId, what.attempt, charge.seconds, charge.credits, at).changes
      : sql(
          c,
          "INSERT INTO budget_charges (budget_id, speech, seconds, credits, at) VALUES (?, ?, ?, ?, ?)",
        ).run(charge.budget, what.speech, charge.seconds, charge.credits, at).changes;
  // Met again (a claim whose refund a crash cut off, made again): spent already.
  if (recorded === 0) return;
  const moved = sql(
    c,
    `UPDATE budgets SET spent_seconds = spent_seconds + ?, spent_credits = spent_credits + ?, updated_at = ?
       WHERE id = ? AND (max_seconds IS NULL OR spent_seconds + ? <= max_seconds + ${BUDGET_TOLERANCE})
         AND (max_credits IS NULL OR spent_credits + ? <= max_credits + ${BUDGET_TOLERANCE})
       RETURNING ${SHARE_COLUMNS}`,
  ).get(charge.seconds, charge.credits, at, charge.budget, charge.seconds, charge.credits) as
    ShareRow | undefined;
  if (moved) {
    tellShares(c, moved);
    return;
  }
  const budget = sql(c, `SELECT ${COLUMNS} FROM budgets WHERE id = ?`).get(charge.budget) as Row;
  throw new BudgetReachedError(budgetOf(budget), charge);
}

/** Gives back the named charge of job `jobId`'s attempt `attempt`, if any. */
export function refundNamedVideo(c: SqlContext, jobId: number, attempt: number): void {
  refund(c, "SELECT id FROM budget_charges WHERE job_id = ? AND attempt = ?", [jobId, attempt]);
}

/** Gives back the last named charge of this speech, if any. */
export function refundNamedSpeech(c: SqlContext, speech: string): void {
  refund(c, "SELECT max(id) FROM budget_charges WHERE speech = ?", [speech]);
}

function refund(c: SqlContext, which: string, values: unknown[]): void {
  const gone = sql(
    c,
    `DELETE FROM budget_charges WHERE id IN (${which}) RETURNING budget_id, seconds, credits`,
  ).all(...values) as { budget_id: number; seconds: number; credits: number }[];
  for (const row of gone) {
    sql(
      c,
      "UPDATE budgets SET spent_seconds = spent_seconds - ?, spent_credits = spent_credits - ?, updated_at = ? WHERE id = ?",
    ).run(row.seconds, row.credits, c.now(), row.budget_id);
  }
}

// ---- what a named budget tells: each share of its caps once in its life ----

/** Records the shares a spend passed, in its write: the budget's row is this write's until it commits. */
function tellShares(c: SqlContext, row: ShareRow): void {
  const told = sharesToTell(row);
  if (told.length === 0) return;
  sql(c, "UPDATE budgets SET noticed_percent = ? WHERE id = ?").run(told[told.length - 1]!.percent, row.id);
  for (const notice of told) c.turn.event(null, BUDGET_NOTICE_KIND, JSON.stringify(notice));
}

type Write = <T>(fn: () => T, durable?: boolean) => T;

/**
 * `write`, which may spend from a named budget: a charge the budget refuses claims its last share's
 * notice, in a write of its own (the refused one is undone), unless some write told it before.
 */
export function noticingRefusals(c: SqlContext, write: Write): Write {
  return (fn, durable) => {
    try {
      return write(fn, durable);
    } catch (error) {
      if (error instanceof BudgetReachedError)
        tellRefusal(c, error.budget.id, refusalNotice(error.budget, error.charge));
      throw error;
    }
  };
}

function tellRefusal(c: SqlContext, budgetId: number, notice: NamedBudgetNotice): void {
  try {
    c.turn.writeStatement(() => {
      const claimed = sql(
        c,
        "UPDATE budgets SET noticed_percent = ? WHERE id = ? AND noticed_percent < ?",
      ).run(notice.percent, budgetId, notice.percent).changes;
      if (claimed === 1) c.turn.event(null, BUDGET_NOTICE_KIND, JSON.stringify(notice));
    });
  } catch {
    // A store that can no longer be written says so at the next write; the refusal is what matters.
  }
}
