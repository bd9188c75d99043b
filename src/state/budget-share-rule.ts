// What a named budget tells, by the same rule on both backends (sqlite/sql/, pg/sql/): each share of
// its caps (BUDGET_THRESHOLDS) once in its life, claimed by the write that passes it.
import type { NamedBudget, NamedBudgetChange, NamedCharge } from "./job-store.js";
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

/** SQL expressions of a budget's caps and what was spent of them. */
export interface CapsSql {
  readonly maxSeconds: string;
  readonly maxCredits: string;
  readonly spentSeconds: string;
  readonly spentCredits: string;
}

/** SQL: whether the seconds cap (else the credits cap) has passed `percent`, as sharesToTell reads it. */
export function passesSql(caps: CapsSql, cap: "seconds" | "credits", percent: number | string): string {
  const [max, spent] =
    cap === "seconds" ? [caps.maxSeconds, caps.spentSeconds] : [caps.maxCredits, caps.spentCredits];
  return `(${max} > 0 AND ${spent} >= ${max} * ${percent} / 100.0 - ${BUDGET_TOLERANCE})`;
}

/** SQL: the highest share of BUDGET_THRESHOLDS that `caps` have passed (0: none). */
export function sharePassedSql(caps: CapsSql): string {
  const shares = [...BUDGET_THRESHOLDS].reverse();
  const passes = (p: number): string =>
    `${passesSql(caps, "seconds", p)} OR ${passesSql(caps, "credits", p)}`;
  return `CASE ${shares.map((p) => `WHEN ${passes(p)} THEN ${p}`).join(" ")} ELSE 0 END`;
}

/**
 * `reel budget set`'s upsert, on either backend: the caps and list given (others kept), and the
 * shares told once it is set. A cap raised arms again the shares above what was spent under the new
 * caps; otherwise they stay told. Placeholders `at(1)` to `at(7)`: the name, the caps (seconds,
 * credits), the price list (file, JSON), the time twice; `least` is the database's two-argument
 * minimum; `returning` the columns read back.
 */
export function setBudgetSql(at: (n: number) => string, least: "min" | "least", returning: string): string {
  const passed = sharePassedSql({
    maxSeconds: "coalesce(excluded.max_seconds, b.max_seconds)",
    maxCredits: "coalesce(excluded.max_credits, b.max_credits)",
    spentSeconds: "b.spent_seconds",
    spentCredits: "b.spent_credits",
  });
  const raised =
    "excluded.max_seconds > coalesce(b.max_seconds, 0) OR excluded.max_credits > coalesce(b.max_credits, 0)";
  return `INSERT INTO budgets AS b (name, max_seconds, max_credits, prices_file, prices_json, created_at, updated_at)
       VALUES (${[1, 2, 3, 4, 5, 6, 7].map(at).join(", ")})
       ON CONFLICT (name) DO UPDATE SET
         max_seconds = coalesce(excluded.max_seconds, b.max_seconds),
         max_credits = coalesce(excluded.max_credits, b.max_credits),
         prices_file = coalesce(excluded.prices_file, b.prices_file),
         prices_json = coalesce(excluded.prices_json, b.prices_json),
         noticed_percent = CASE WHEN ${raised} THEN ${least}(b.noticed_percent, ${passed}) ELSE b.noticed_percent END,
         updated_at = excluded.updated_at
       RETURNING ${returning}`;
}

/** What `reel budget set` sets, as setBudgetSql's values. */
export function setBudgetValues(name: string, change: NamedBudgetChange, now: number): unknown[] {
  return [
    name,
    change.maxSeconds ?? null,
    change.maxCredits ?? null,
    change.prices?.file ?? null,
    change.prices?.json ?? null,
    now,
    now,
  ];
}
