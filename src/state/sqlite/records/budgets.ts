// The ledger of capped runs and the named budgets on the state file (sql/budget.ts,
// sql/named-budgets.ts).
import type {
  BudgetOwner,
  BudgetSessionRow,
  NamedBudget,
  NamedBudgetChange,
  OpenBudgetSession,
  SpendTally,
  BudgetRecords,
  NamedBudgetRecords,
} from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as budget from "../sql/budget.js";
import * as namedBudgets from "../sql/named-budgets.js";

/** `ownSessions`: the budget sessions this store started or resumed (the others' processes are gone). */
export function budgetRecords(c: SqlContext, ownSessions: Set<number>): BudgetRecords & NamedBudgetRecords {
  return {
    async openBudgetSessions(scope: string): Promise<OpenBudgetSession[]> {
      // The file's lock lets one process write it: every session not this store's has no run left.
      return budget
        .openBudgetSessions(c, scope)
        .map((session) => ({ ...session, runs: ownSessions.has(session.id) ? "here" : "gone" }));
    },
    async startBudgetSession(scope: string, owner: BudgetOwner): Promise<BudgetSessionRow> {
      const session = budget.startBudgetSession(c, scope, owner);
      ownSessions.add(session.id);
      return session;
    },
    async takeBudgetSession(session: BudgetSessionRow, owner: BudgetOwner): Promise<boolean> {
      const taken = ownSessions.has(session.id) || budget.takeBudgetSession(c, session, owner);
      if (taken) ownSessions.add(session.id);
      return taken;
    },
    async budgetSpent(id: number): Promise<SpendTally> {
      return budget.budgetSpent(c, id);
    },
    async refundVideo(session: number, jobId: number, attempt: number): Promise<void> {
      budget.refundVideo(c, session, jobId, attempt);
    },
    async refundSpeech(session: number, voiceId: string, text: string): Promise<void> {
      budget.refundSpeech(c, session, voiceId, text);
    },
    async endBudgetSession(id: number): Promise<void> {
      budget.endBudgetSession(c, id);
    },

    // Written beside a run that holds the file (reel budget set): resolves once committed, so the
    // runners' next claims read it.
    async setBudget(name: string, change: NamedBudgetChange): Promise<NamedBudget> {
      return c.turn.committed(() => c.turn.writeStatement(() => namedBudgets.setBudget(c, name, change)));
    },
    async findBudget(name: string): Promise<NamedBudget | undefined> {
      return namedBudgets.findBudget(c, name);
    },
    async listBudgets(): Promise<NamedBudget[]> {
      return namedBudgets.listBudgets(c);
    },
  };
}
