// What a named budget tells, by the same rule on both backends (sqlite/sql/, pg/sql/): each share of
// its caps (BUDGET_THRESHOLDS) once in its life, claimed by the write that passes it.
import type { NamedBudget, NamedCharge } from "./job-store.js";
import { BUDGET_THRESHOLDS, type NamedBudgetNotice } from "./named-budget.js";
import { BUDGET_TOLERANCE } from "./ledger-rule.js";

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
