// The ledger of capped runs and the named budgets, as the store keeps them: a charge is written
// with the intent it goes with (see ../job-store.ts).
import type { NamedBudget, NamedBudgetChange, NamedCharge } from "../named-budget.js";

/** What a submission costs a capped run (src/budget): what was sent, and what it cost then. */
export interface VideoCharge {
  /** The budget session (BudgetRecords). */
  readonly session: number;
  readonly model: string;
  readonly resolution: string | null;
  readonly seconds: number;
  /** Its credits at the prices of the moment it is sent; null when no price is known. */
  readonly credits: number | null;
  /** What it spends of a named budget (NamedBudgetRecords), checked and spent with the claim. */
  readonly named?: NamedCharge;
}

/** A speech call of a capped run. */
export interface SpeechCharge {
  readonly session: number;
  /** Its credits at the prices of the moment it is made; null when no price is known. */
  readonly credits: number | null;
  /** What it spends of a named budget, checked and spent with the intent. */
  readonly named?: NamedCharge;
}

/**
 * Named budgets: not scoped by service (the money is the team's), written beside the runners that
 * spend from them (no lock, no runner). A charge (NamedCharge) is spent by the intent it goes with:
 * markSubmitting and markSpeechCreating check it against the budget's caps as they are at that moment
 * and record it in the same transaction, or throw BudgetReachedError having written nothing, so no
 * interleaving of runners passes a cap and a kill -9 loses no spend. A charge met again (the same
 * job's attempt) is spent once. refundVideo and refundSpeech give a named charge back too.
 */
export interface NamedBudgetRecords {
  /** Creates budget `name`, or changes its caps (what was spent stays spent). */
  setBudget(name: string, change: NamedBudgetChange): Promise<NamedBudget>;
  findBudget(name: string): Promise<NamedBudget | undefined>;
  /** Every budget, by name. */
  listBudgets(): Promise<NamedBudget[]>;
}

/**
 * The process that starts or resumes a budget session, as recorded for people to read. Whether it
 * still runs is never judged by these (see OpenBudgetSession.runs).
 */
export interface BudgetOwner {
  readonly host: string;
  readonly pid: number;
}

/** A budget session as recorded: one capped run or watch, and the runs that resume it. */
export interface BudgetSessionRow extends BudgetOwner {
  readonly id: number;
  readonly scope: string;
  readonly startedAt: number;
  /** On a shared store, the runner that runs it (null on a state file, or not known). */
  readonly runner: number | null;
}

/**
 * An open session, and whether the run that has it still runs, as the store can tell: `here`, this
 * store's own; `gone`, surely stopped (on a state file, every other one: its lock lets one process
 * write it; on a shared store, its runner stopped or was found lost); on a shared store, a runner
 * not stopped, last heard at `heardAt` (the store's clock): at work, or killed within its lease.
 */
export interface OpenBudgetSession extends BudgetSessionRow {
  readonly runs: "here" | "gone" | { readonly heardAt: number };
}

/**
 * What a budget session sent that may cost: videos by model, resolution and whether a price was
 * recorded with them, and speech calls. `credits`: what those charges cost when they were sent;
 * null for charges sent with no price known (priced when read).
 */
export interface SpendTally {
  readonly videos: readonly {
    readonly model: string;
    readonly resolution: string | null;
    readonly seconds: number;
    readonly count: number;
    readonly credits: number | null;
  }[];
  readonly speech: { readonly count: number; readonly credits: number | null }[];
}

/**
 * The ledger of capped runs (src/budget), scoped by service. Charges are written with their intents
 * (markSubmitting, markSpeechCreating); a refund is a write of its own after the intent is given
 * back, so a crash between them counts a request never sent (the safe side: the cap is never passed).
 */
export interface BudgetRecords {
  /** The sessions of `scope` not ended, oldest first, with whether their run still runs. */
  openBudgetSessions(scope: string): Promise<OpenBudgetSession[]>;
  /** A session of this store's own (its runner's, on a shared store). */
  startBudgetSession(scope: string, owner: BudgetOwner): Promise<BudgetSessionRow>;
  /**
   * Makes session `session` this store's own if it is still as read (the same runner, or the same
   * process): a compare-and-set, so of two processes resuming one session, one does. False when
   * another took it first.
   */
  takeBudgetSession(session: BudgetSessionRow, owner: BudgetOwner): Promise<boolean>;
  budgetSpent(id: number): Promise<SpendTally>;
  /** The charge of job `jobId`'s attempt `attempt`, whose request was not sent after all. */
  refundVideo(session: number, jobId: number, attempt: number): Promise<void>;
  /** The last charge of this speech, whose call was refused for certain. */
  refundSpeech(session: number, voiceId: string, text: string): Promise<void>;
  /** The session's run finished: the next run starts a session of its own. */
  endBudgetSession(id: number): Promise<void>;
}
