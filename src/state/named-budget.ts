// A named budget as the store keeps it (`reel budget set`), apart from the store's interface so that
// the store's errors can name it too.

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
