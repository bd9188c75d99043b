// The budget of a capped run: --max-seconds, --max-credits.
export { Budget, type BudgetStop, type BudgetThreshold } from "./budget.js";
export { BudgetStoppedError } from "../errors/budget.js";
export type { BudgetCaps, Cost } from "./cost.js";
export { Reservation } from "./reservation.js";
export { type BudgetRequest, endBudgetScope, openBudget, runScope, watchScope } from "./session.js";
export { budgetJson, describeBudget, describeStop, describeThreshold } from "./messages.js";
