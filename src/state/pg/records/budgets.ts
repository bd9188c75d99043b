// The ledger of capped runs and the named budgets on the shared store (sql/budget.ts,
// sql/named-budgets.ts).
import type { BudgetRecords, NamedBudgetRecords } from "../../job-store.js";
import type { PgSide } from "./side.js";
import { namedSpeechKey } from "../../ledger-rule.js";
import * as budget from "../sql/budget.js";
import * as namedBudgets from "../sql/named-budgets.js";

export function budgetRecords(s: PgSide): BudgetRecords & NamedBudgetRecords {
  return {
    openBudgetSessions(scope) {
      return s.io(() => budget.openBudgetSessions(s.writer(), scope));
    },
    startBudgetSession(scope, owner) {
      return s.io(() => budget.startBudgetSession(s.writer(), scope, owner));
    },
    takeBudgetSession(session, owner) {
      return s.io(() => budget.takeBudgetSession(s.writer(), session, owner));
    },
    budgetSpent(id) {
      return s.io(() => budget.budgetSpent(s.c, id));
    },
    async refundVideo(session, jobId, attempt) {
      await s.io(() => budget.refundVideo(s.c, session, jobId, attempt));
      await s.io(() => namedBudgets.refundNamedVideo(s.c, jobId, attempt));
    },
    async refundSpeech(session, voiceId, text) {
      await s.io(() => budget.refundSpeech(s.c, session, voiceId, text));
      await s.io(() => namedBudgets.refundNamedSpeech(s.c, namedSpeechKey(s.c.serviceId, voiceId, text)));
    },

    setBudget(name, change) {
      return s.io(() => namedBudgets.setBudget(s.c, name, change));
    },
    findBudget(name) {
      return s.io(() => namedBudgets.findBudget(s.c, name));
    },
    listBudgets() {
      return s.io(() => namedBudgets.listBudgets(s.c));
    },
    endBudgetSession(id) {
      return s.io(() => budget.endBudgetSession(s.c, id));
    },
  };
}
