// A named budget as the store keeps it (`reel budget set`), apart from the store's interface, and
// the store's refusal of a charge it has no room for. BudgetReachedError carries the budget itself
// (the run's budget reads it back), so it stays here rather than in src/errors/: the errors import
// nothing of the parts above them, not even a type.
import { ReelError } from "../errors/reel-error.js";

/** What one costed call spends of a named budget, priced by the budget's own price list. */
export interface NamedCharge {
  /** The budget's id (NamedBudget.id). */
  readonly budget: number;
  readonly seconds: number;
  readonly credits: number;
}

/** A named budget's caps: the total it may spend in its life. */
export interface NamedBudgetCaps {
  readonly maxSeconds: number | null;
  readonly maxCredits: number | null;
}

/**
 * A named budget (`reel budget set`): one cap shared by every runner and run that names it, kept in
 * the store. `spent` is what was charged to it (a claim or speech intent, in the intent's own
 * transaction), refunds taken off; `prices` the list its credits are counted by (the file's name and
 * its content as JSON), so every runner prices alike.
 */
export interface NamedBudget extends NamedBudgetCaps {
  readonly id: number;
  readonly name: string;
  readonly prices: { readonly file: string; readonly json: string } | null;
  readonly spentSeconds: number;
  readonly spentCredits: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What `reel budget set` changes: the caps given (others kept), and the price list if given. */
export interface NamedBudgetChange {
  readonly maxSeconds?: number;
  readonly maxCredits?: number;
  readonly prices?: { readonly file: string; readonly json: string };
}

/**
 * The shares of a cap told as they are passed (notifications: a person may raise the cap in time): a
 * run's own cap once per session, a named budget's once in the budget's life (`budget set` raising it
 * arms again the shares above what was spent).
 */
export const BUDGET_THRESHOLDS = [80, 100] as const;

/** The events row kind of a named budget's notice (events/stored.ts reads it as budget.threshold). */
export const BUDGET_NOTICE_KIND = "budget-notice";

/**
 * A share of a named budget told (the store's `budget-notice` event): passed by a spend, or, for the
 * last share, met by a charge the budget had no room for (`refused`). The runner whose write claimed
 * it records it, in that write: one notice between every runner sharing the budget.
 */
export interface NamedBudgetNotice {
  readonly percent: (typeof BUDGET_THRESHOLDS)[number];
  readonly budget: string;
  readonly cap: "seconds" | "credits";
  /** What was spent from the budget (by every run naming it) when it was told. */
  readonly spent: number;
  readonly max: number;
  /** Told at a refusal: what did not fit, in the cap's unit, and what it was for. */
  readonly refused?: { readonly amount: number; readonly for: "job" | "speech" };
}

/**
 * A named budget has no room for a charge: the intent it went with was not written, nothing may be
 * sent. `budget` is the budget as the check found it.
 */
export class BudgetReachedError extends ReelError {
  constructor(
    readonly budget: NamedBudget,
    readonly charge: NamedCharge,
  ) {
    super("E_BUDGET", `not sent: the budget '${budget.name}' has no room for it`);
  }
}
