// The budget of a capped run: --max-seconds, --max-credits.
export {
  Budget,
  type BudgetCaps,
  type BudgetStop,
  type BudgetThreshold,
  BudgetStoppedError,
  type Cost,
  Reservation,
} from "./budget.js";
export { type BudgetRequest, endBudgetScope, openBudget, runScope, watchScope } from "./session.js";
export { budgetJson, describeBudget, describeStop, describeThreshold } from "./messages.js";
