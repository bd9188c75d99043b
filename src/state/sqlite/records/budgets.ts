// The ledger of capped runs and the named budgets on the state file (sql/budget.ts,
// sql/named-budgets.ts).
import type { BudgetRecords, NamedBudgetRecords } from "../../job-store.js";
import { methodsOn, type SqlContext } from "../sql/context.js";
import * as budget from "../sql/budget.js";
import * as namedBudgets from "../sql/named-budgets.js";

/** `ownSessions`: the budget sessions this store started or resumed (the others' processes are gone). */
export function budgetRecords(c: SqlContext, ownSessions: Set<number>): BudgetRecords & NamedBudgetRecords {
  const on = methodsOn(c);
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
    budgetSpent: on(budget.budgetSpent),
    refundVideo: on(budget.refundVideo),
    refundSpeech: on(budget.refundSpeech),
    endBudgetSession: on(budget.endBudgetSession),

    // Written beside a run that holds the file (reel budget set): resolves once committed, so the
    // runners' next claims read it.
    async setBudget(name, change) {
      return c.turn.committed(() => c.turn.writeStatement(() => namedBudgets.setBudget(c, name, change)));
    },
    findBudget: on(namedBudgets.findBudget),
    listBudgets: on(namedBudgets.listBudgets),
  };
}
