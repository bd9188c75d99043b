// The ledger of capped runs and the named budgets on the shared store (sql/budget.ts,
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
import type { PgSide } from "./side.js";
import { namedSpeechKey } from "../../ledger-rule.js";
import * as budget from "../sql/budget.js";
import * as namedBudgets from "../sql/named-budgets.js";

export function budgetRecords(s: PgSide): BudgetRecords & NamedBudgetRecords {
  return {
    openBudgetSessions(scope: string): Promise<OpenBudgetSession[]> {
      return s.io(() => budget.openBudgetSessions(s.writer(), scope));
    },
    startBudgetSession(scope: string, owner: BudgetOwner): Promise<BudgetSessionRow> {
      return s.io(() => budget.startBudgetSession(s.writer(), scope, owner));
    },
    takeBudgetSession(session: BudgetSessionRow, owner: BudgetOwner): Promise<boolean> {
      return s.io(() => budget.takeBudgetSession(s.writer(), session, owner));
    },
    budgetSpent(id: number): Promise<SpendTally> {
      return s.io(() => budget.budgetSpent(s.c, id));
    },
    async refundVideo(session: number, jobId: number, attempt: number): Promise<void> {
      await s.io(() => budget.refundVideo(s.c, session, jobId, attempt));
      await s.io(() => namedBudgets.refundNamedVideo(s.c, jobId, attempt));
    },
    async refundSpeech(session: number, voiceId: string, text: string): Promise<void> {
      await s.io(() => budget.refundSpeech(s.c, session, voiceId, text));
      await s.io(() => namedBudgets.refundNamedSpeech(s.c, namedSpeechKey(s.c.serviceId, voiceId, text)));
    },

    setBudget(name: string, change: NamedBudgetChange): Promise<NamedBudget> {
      return s.io(() => namedBudgets.setBudget(s.c, name, change));
    },
    findBudget(name: string): Promise<NamedBudget | undefined> {
      return s.io(() => namedBudgets.findBudget(s.c, name));
    },
    listBudgets(): Promise<NamedBudget[]> {
      return s.io(() => namedBudgets.listBudgets(s.c));
    },
    endBudgetSession(id: number): Promise<void> {
      return s.io(() => budget.endBudgetSession(s.c, id));
    },
  };
}
