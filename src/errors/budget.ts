// The error of a capped run (src/budget). A named budget's own refusal, BudgetReachedError, stays
// beside the budget it carries (state/named-budget.ts).
import { ReelError } from "./reel-error.js";

/**
 * A costed call the budget stopped before it was made: nothing was sent, nothing recorded. `stop`:
 * the budget's BudgetStop (budget/budget.ts), of which the message names what was not sent.
 */
export class BudgetStoppedError extends ReelError {
  constructor(stop: { readonly what: string }) {
    super("E_BUDGET", `not sent: ${stop.what} would pass the budget's cap`);
  }
}
