// The ledger of capped runs and the named budgets on the state file (sql/budget.ts,
// sql/named-budgets.ts).
import type { BudgetRecords, NamedBudgetRecords } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as budget from "../sql/budget.js";
import * as namedBudgets from "../sql/named-budgets.js";

/** `ownSessions`: the budget sessions this store started or resumed (the others' processes are gone). */
export function budgetRecords(c: SqlContext, ownSessions: Set<number>): BudgetRecords & NamedBudgetRecords {
  return {
    async openBudgetSessions(scope) {
      // The file's lock lets one process write it: every session not this store's has no run left.
      return budget
        .openBudgetSessions(c, scope)
        .map((session) => ({ ...session, runs: ownSessions.has(session.id) ? "here" : "gone" }));
    },
    async startBudgetSession(scope, owner) {
      const session = budget.startBudgetSession(c, scope, owner);
      ownSessions.add(session.id);
      return session;
    },
    async takeBudgetSession(session, owner) {
      const taken = ownSessions.has(session.id) || budget.takeBudgetSession(c, session, owner);
      if (taken) ownSessions.add(session.id);
      return taken;
    },
    async budgetSpent(id) {
      return budget.budgetSpent(c, id);
    },
    async refundVideo(session, jobId, attempt) {
      budget.refundVideo(c, session, jobId, attempt);
    },
    async refundSpeech(session, voiceId, text) {
      budget.refundSpeech(c, session, voiceId, text);
    },
    async endBudgetSession(id) {
      budget.endBudgetSession(c, id);
    },

    // Written beside a run that holds the file (reel budget set): resolves once committed, so the
    // runners' next claims read it.
    async setBudget(name, change) {
      return c.turn.committed(() => c.turn.writeStatement(() => namedBudgets.setBudget(c, name, change)));
    },
    async findBudget(name) {
      return namedBudgets.findBudget(c, name);
    },
    async listBudgets() {
      return namedBudgets.listBudgets(c);
    },
  };
}
