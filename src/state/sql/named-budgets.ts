// Named budgets on the state file (migration 14; what they guarantee: NamedBudgetRecords in
// job-store.ts). `spendFromBudget` is the check a claim and a speech intent make inside their own
// write: the state file's transactions are IMMEDIATE, so the budget's row read and moved there is
// the one every other writer (a `reel budget set` beside the run) sees next.
import { BudgetReachedError } from "../errors.js";
import type { NamedBudget, NamedBudgetChange, NamedCharge } from "../job-store.js";
import { BUDGET_NOTICE_KIND, BUDGET_THRESHOLDS, type NamedBudgetNotice } from "../named-budget.js";
import { type SqlContext, sql } from "./context.js";

/** Sums of decimal prices (0.1 + 0.2) must not refuse an exact fit. */
export const BUDGET_TOLERANCE = 1e-9;

const COLUMNS = `id, name, max_seconds AS maxSeconds, max_credits AS maxCredits, prices_file, prices_json,
  spent_seconds AS spentSeconds, spent_credits AS spentCredits, created_at AS createdAt, updated_at AS updatedAt`;

type Row = Omit<NamedBudget, "prices"> & { prices_file: string | null; prices_json: string | null };

function budgetOf(row: Row): NamedBudget {
  const { prices_file: file, prices_json: json, ...rest } = row;
  return { ...rest, prices: file !== null && json !== null ? { file, json } : null };
}

/** The ledger's key of a speech call: its service's, voice and text. */
export function namedSpeechKey(serviceId: number, voiceId: string, text: string): string {
  return `${serviceId}\n${voiceId}\n${text}`;
}

export function findBudget(c: SqlContext, name: string): NamedBudget | undefined {
  const row = sql(c, `SELECT ${COLUMNS} FROM budgets WHERE name = ?`).get(name) as Row | undefined;
  return row && budgetOf(row);
}

export function listBudgets(c: SqlContext): NamedBudget[] {
  return (sql(c, `SELECT ${COLUMNS} FROM budgets ORDER BY name`).all() as Row[]).map(budgetOf);
}

export function setBudget(c: SqlContext, name: string, change: NamedBudgetChange): NamedBudget {
  const now = c.now();
  const row = sql(
    c,
    `INSERT INTO budgets (name, max_seconds, max_credits, prices_file, prices_json, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET
         max_seconds = coalesce(excluded.max_seconds, max_seconds),
         max_credits = coalesce(excluded.max_credits, max_credits),
         prices_file = coalesce(excluded.prices_file, prices_file),
         prices_json = coalesce(excluded.prices_json, prices_json),
         noticed_percent = ${noticedAfterSetSql("", "min")},
         updated_at = excluded.updated_at
       RETURNING ${COLUMNS}`,
  ).get(
    name,
    change.maxSeconds ?? null,
    change.maxCredits ?? null,
    change.prices?.file ?? null,
    change.prices?.json ?? null,
    now,
    now,
  ) as Row;
  return budgetOf(row);
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

/** What a spend reads back of its budget, to tell the shares it passed. */
export const SHARE_COLUMNS =
  "id, name, max_seconds, max_credits, spent_seconds, spent_credits, noticed_percent";

export interface ShareRow {
  readonly id: number | string;
  readonly name: string;
  readonly max_seconds: number | null;
  readonly max_credits: number | null;
  readonly spent_seconds: number;
  readonly spent_credits: number;
  /** The highest share told (0: none). */
  readonly noticed_percent: number;
}

/** The shares `row` has passed and not told yet, lowest first. */
export function sharesToTell(row: ShareRow): NamedBudgetNotice[] {
  const told: NamedBudgetNotice[] = [];
  for (const percent of BUDGET_THRESHOLDS) {
    if (percent <= row.noticed_percent) continue;
    const caps = [
      { cap: "seconds", max: row.max_seconds, spent: row.spent_seconds },
      { cap: "credits", max: row.max_credits, spent: row.spent_credits },
    ] as const;
    const passed = caps.find(
      ({ max, spent }) => max !== null && max > 0 && spent >= (max * percent) / 100 - BUDGET_TOLERANCE,
    );
    if (!passed) break; // the next share is higher
    told.push({ percent, budget: row.name, cap: passed.cap, spent: passed.spent, max: passed.max! });
  }
  return told;
}

/** The last share, told when the budget refuses `charge`: the cap it would pass, and what was spent. */
export function refusalNotice(budget: NamedBudget, charge: NamedCharge): NamedBudgetNotice {
  const bySeconds =
    budget.maxSeconds !== null && budget.spentSeconds + charge.seconds > budget.maxSeconds + BUDGET_TOLERANCE;
  const cap = bySeconds || budget.maxCredits === null ? "seconds" : "credits";
  return {
    percent: BUDGET_THRESHOLDS[BUDGET_THRESHOLDS.length - 1]!,
    budget: budget.name,
    cap,
    spent: cap === "seconds" ? budget.spentSeconds : budget.spentCredits,
    max: (cap === "seconds" ? budget.maxSeconds : budget.maxCredits) ?? 0,
    refused: {
      amount: cap === "seconds" ? charge.seconds : charge.credits,
      for: charge.seconds > 0 ? "job" : "speech",
    },
  };
}

/**
 * SQL, in `budget set`'s upsert: the shares told, once it is set. A cap raised arms again the shares
 * above what was spent under the new caps; otherwise they stay told. `row` prefixes the budget's
 * columns; `least` is the database's two-argument minimum.
 */
export function noticedAfterSetSql(row: string, least: "min" | "least"): string {
  const maxSeconds = `coalesce(excluded.max_seconds, ${row}max_seconds)`;
  const maxCredits = `coalesce(excluded.max_credits, ${row}max_credits)`;
  const passes = (percent: number): string =>
    `(${maxSeconds} > 0 AND ${row}spent_seconds >= ${maxSeconds} * ${percent} / 100.0 - ${BUDGET_TOLERANCE})
      OR (${maxCredits} > 0 AND ${row}spent_credits >= ${maxCredits} * ${percent} / 100.0 - ${BUDGET_TOLERANCE})`;
  const shares = [...BUDGET_THRESHOLDS].reverse();
  const passed = `CASE ${shares.map((p) => `WHEN ${passes(p)} THEN ${p}`).join(" ")} ELSE 0 END`;
  const raised = `excluded.max_seconds > coalesce(${row}max_seconds, 0) OR excluded.max_credits > coalesce(${row}max_credits, 0)`;
  return `CASE WHEN ${raised} THEN ${least}(${row}noticed_percent, ${passed}) ELSE ${row}noticed_percent END`;
}

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
