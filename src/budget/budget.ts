// A capped run's budget: --max-seconds and --max-credits, counted over what this run (and
// the runs it resumes: session.ts) sent that may cost. The engine asks before each costed call:
// `hold` reserves the cost, in one synchronous step, so concurrent submissions of one process can
// never pass the cap together; a request not sent after all gives it back. A cost that does not fit
// while other jobs hold reservations waits for them to settle (claimed, or let go: in a fleet,
// another runner may claim those jobs), first come first served; the first cost that does not fit
// once nothing held may come back stops the budget for good: nothing more is submitted (no job is
// picked because it is smaller), what is in flight is followed, and the run ends with exit 3 (see
// describeStop).
import type { Job } from "../manifest/index.js";
import { type PriceTable, videoCredits } from "../prices/index.js";
import type { Model, Resolution } from "../service-contract/api-types.js";
import type { BudgetReachedError } from "../state/named-budget.js";
import { readStoredSpec, type StoredSpeech } from "../stored-spec.js";
import type { BudgetSessionRow, JobRow, JobStore, SpeechCharge, VideoCharge } from "../state/job-store.js";
import type { NamedBudget } from "../state/job-store.js";
import { BUDGET_THRESHOLDS } from "../state/named-budget.js";
import { type BudgetCaps, CAP_TOLERANCE, type Cost } from "./cost.js";
import { type SharedBudget, sharedSpeechCharge, sharedVideoCharge } from "./named.js";

/** Why the budget stopped the work: the first cost that would have passed a cap. */
export interface BudgetStop {
  /** What was not sent: a job's key, or a speech. */
  readonly what: string;
  readonly cost: Cost;
  /** Spent when it stopped (this session's, resumed runs included). */
  readonly spent: Cost;
  /** True when the price list has no price for it: it cannot be counted against --max-credits. */
  readonly unpriced: boolean;
  /** When the named budget stopped it: that budget, as the claim's check found it. */
  readonly shared?: NamedBudget;
}

export { BUDGET_THRESHOLDS };

/** What the budget counts passed a share of one of its caps. */
export interface BudgetThreshold {
  readonly percent: (typeof BUDGET_THRESHOLDS)[number];
  readonly cap: "seconds" | "credits";
  /** Spent and held for requests on their way, when it passed. */
  readonly spent: number;
  readonly max: number;
}

/** The jobs a capped run left unsent, and what sending them would cost. */
export interface LeftUnsent {
  readonly jobs: number;
  readonly cost: Cost;
}

/** A cost that did not fit while reservations were held: told whether it was admitted. */
interface Waiter {
  readonly what: string;
  readonly cost: Cost;
  readonly reserve: boolean;
  readonly done: (admitted: boolean) => void;
}

export class Budget {
  private spentNow: Cost;
  private stopReason: BudgetStop | undefined;
  private readonly stopListeners: ((stop: BudgetStop) => void)[] = [];
  private readonly thresholdListeners: ((passed: BudgetThreshold) => void)[] = [];
  private readonly thresholdsSaid = new Set<number>();
  /** Reservations held and not settled yet: what they hold may yet be given back. */
  private holding = 0;
  /** Costs waiting for the reservations to settle, in the order they came. */
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly session: BudgetSessionRow,
    readonly caps: BudgetCaps,
    readonly prices: PriceTable | undefined,
    /** Spent by the runs this one resumes (the session's ledger when it started). */
    readonly earlier: Cost,
    /** The named budget the run spends from too (--budget NAME), if any. */
    readonly shared?: SharedBudget,
  ) {
    this.spentNow = earlier;
  }

  /** Spent so far in this session, what is reserved for requests on their way included. */
  get spent(): Cost {
    return this.spentNow;
  }

  /** `listener` is told once, when the budget stops. */
  onStop(listener: (stop: BudgetStop) => void): void {
    this.stopListeners.push(listener);
  }

  /**
   * `listener` is told each of BUDGET_THRESHOLDS once, when what the budget counts passes it (at
   * once if it has: a session resumed past 80%).
   */
  onThreshold(listener: (passed: BudgetThreshold) => void): void {
    this.thresholdListeners.push(listener);
    this.sayThresholds();
  }

  /** Why the budget stopped, once it has. */
  get stopped(): BudgetStop | undefined {
    return this.stopReason;
  }

  /** A job's video: its seconds, and its credits (undefined when the price list has none for it). */
  videoCost(job: Job): { seconds: number; credits: number | undefined } {
    return this.costOf(job.model, job.spec.resolution, job.seconds);
  }

  /** `seconds` of video of `model` at `resolution` (credits undefined when not priced). */
  costOf(
    model: Model,
    resolution: Resolution | undefined,
    seconds: number,
  ): { seconds: number; credits: number | undefined } {
    const credits = this.prices ? videoCredits(this.prices, model, resolution, seconds) : 0;
    return { seconds, credits };
  }

  /**
   * The jobs among `rows` a capped run left unsent (pending, or failed before anything was sent: a
   * rerun sends both), and what sending them would cost: their videos, and the speech they need
   * that `store` has none of yet (each line once).
   */
  async leftUnsent(rows: readonly JobRow[], store: Pick<JobStore, "findSpeech">): Promise<LeftUnsent> {
    let seconds = 0;
    let credits = 0;
    let jobs = 0;
    const lines = new Map<string, StoredSpeech>();
    // Stopped by the named budget: counted as it counts, by its own list.
    const prices = this.stopReason?.shared ? this.shared?.prices : this.prices;
    for (const row of rows) {
      if (row.state !== "pending" && row.fail_kind !== "local") continue;
      const spec = readStoredSpec(row.spec_json);
      jobs++;
      seconds += row.seconds;
      credits +=
        (prices &&
          videoCredits(prices, row.model as Model, spec.resolution as Resolution | undefined, row.seconds)) ??
        0;
      for (const line of spec.speech) lines.set(`${line.voiceId}\n${line.text}`, line);
    }
    for (const line of lines.values()) {
      if ((await store.findSpeech(line.voiceId, line.text))?.state !== "done") credits += prices?.speech ?? 0;
    }
    return { jobs, cost: { seconds, credits } };
  }

  /** One speech call: no seconds of video; its price, if the list gives one. */
  speechCost(): Cost {
    return { seconds: 0, credits: this.prices?.speech ?? 0 };
  }

  /**
   * What a job's claim records in the ledger: what is sent, and its credits at today's prices, so
   * that a price changed later does not change what this spent.
   */
  videoCharge(job: Job): VideoCharge {
    const credits = this.prices
      ? videoCredits(this.prices, job.model, job.spec.resolution, job.seconds)
      : undefined;
    return {
      session: this.session.id,
      model: job.model,
      resolution: job.spec.resolution ?? null,
      seconds: job.seconds,
      credits: credits ?? null,
      ...(this.shared ? { named: sharedVideoCharge(this.shared, job) } : {}),
    };
  }

  /** What a speech call's intent records in the ledger (see videoCharge). */
  speechCharge(): SpeechCharge {
    const named = this.shared && sharedSpeechCharge(this.shared);
    return { session: this.session.id, credits: this.prices?.speech ?? null, ...(named ? { named } : {}) };
  }

  /**
   * Whether the named budget counts credits by a list that does not price `job`: it would count it
   * at nothing, so the budget stops (unpriced) before anything is made for it.
   */
  refusesShared(job: Job): boolean {
    if (!this.shared || this.shared.row.maxCredits === null || this.stopReason) return false;
    const priced =
      this.shared.prices &&
      videoCredits(this.shared.prices, job.model, job.spec.resolution, job.seconds) !== undefined;
    if (priced) return false;
    this.stop(job.key, { seconds: job.seconds, credits: 0 }, true, this.shared.row);
    return true;
  }

  /**
   * The named budget had no room for `what` (the store refused its claim or speech intent, writing
   * nothing): the budget stops as at its own cap.
   */
  reachedShared(what: string, reached: BudgetReachedError): void {
    if (this.stopReason) return;
    const { seconds, credits } = reached.charge;
    this.stop(what, { seconds, credits }, false, reached.budget);
  }

  /**
   * Reserves `cost` for `what` as a hold (see Reservation): true once it fits under every cap. A cost
   * that does not fit waits while other holds may be given back, and is refused (false) once none
   * may: the budget then stops. A cost the list cannot price (`credits` undefined) under
   * --max-credits stops it at once. `signal`: the wait ends (false, nothing stopped) when the run
   * stops.
   */
  hold(
    what: string,
    cost: { seconds: number; credits: number | undefined },
    signal?: AbortSignal,
  ): Promise<boolean> {
    return this.admit(what, cost, true, signal);
  }

  /** `hold` without waiting: false (the budget not stopped) when the cost does not fit now. */
  holdNow(cost: Cost): boolean {
    if (this.stopReason || this.waiting.length > 0 || !this.fits(cost)) return false;
    this.reserve(cost, true);
    return true;
  }

  /** A hold settled (claimed, or let go): `back`, what of it is given back. */
  settle(back: Cost): void {
    this.holding--;
    this.giveBack(back);
  }

  /**
   * A speech call of a job already admitted (its video held by a Reservation) that its hold does not
   * cover: made if it fits, even once the budget stopped for a job after it. A budget that stops
   * nothing started before the stop from finishing within the cap.
   */
  takeForAdmitted(what: string, cost: Cost): boolean {
    if (this.fits(cost)) {
      this.spentNow = add(this.spentNow, cost);
      this.sayThresholds();
      return true;
    }
    if (!this.stopReason) this.stop(what, cost, false);
    return false;
  }

  /**
   * Whether `cost` fits, nothing reserved: a retry is made pending only if it does (pending, the next
   * run would send it without being asked to). Waits and stops as `hold`.
   */
  check(
    what: string,
    cost: { seconds: number; credits: number | undefined },
    signal?: AbortSignal,
  ): Promise<boolean> {
    return this.admit(what, cost, false, signal);
  }

  private async admit(
    what: string,
    cost: { seconds: number; credits: number | undefined },
    reserve: boolean,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    if (this.stopReason) return false;
    const priced = { seconds: cost.seconds, credits: cost.credits ?? 0 };
    if (cost.credits === undefined && this.caps.maxCredits !== undefined) {
      this.stop(what, priced, true);
      return false;
    }
    // Behind the costs already waiting: none is passed by a smaller one.
    if (this.waiting.length === 0) {
      if (this.fits(priced)) {
        this.reserve(priced, reserve);
        return true;
      }
      if (this.holding === 0) {
        this.stop(what, priced, false);
        return false;
      }
    }
    if (signal?.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        // Not served again here: the run is stopping, and one fewer waiting changes no fit (a cost
        // waits only while holds are out, whose settling serves the rest).
        waiter.done(false);
      };
      const waiter: Waiter = {
        what,
        cost: priced,
        reserve,
        done: (admitted) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(admitted);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private reserve(cost: Cost, hold: boolean): void {
    if (!hold) return;
    this.spentNow = add(this.spentNow, cost);
    this.holding++;
    this.sayThresholds();
  }

  private sayThresholds(): void {
    if (this.thresholdListeners.length === 0) return;
    for (const percent of BUDGET_THRESHOLDS) {
      if (this.thresholdsSaid.has(percent)) continue;
      const passed = this.passedShare(percent);
      if (!passed) return; // the next share is higher
      this.thresholdsSaid.add(percent);
      for (const listener of this.thresholdListeners) listener(passed);
    }
  }

  private passedShare(percent: BudgetThreshold["percent"]): BudgetThreshold | undefined {
    for (const cap of ["seconds", "credits"] as const) {
      const max = cap === "seconds" ? this.caps.maxSeconds : this.caps.maxCredits;
      if (max === undefined || max <= 0) continue;
      const spent = this.spentNow[cap];
      if (spent >= (max * percent) / 100 - CAP_TOLERANCE) return { percent, cap, spent, max };
    }
    return undefined;
  }

  /** Admits the waiting costs that fit now, in order; stops at the first that never will. */
  private serve(): void {
    while (this.waiting.length > 0 && !this.stopReason) {
      const head = this.waiting[0]!;
      if (this.fits(head.cost)) {
        this.waiting.shift();
        this.reserve(head.cost, head.reserve);
        head.done(true);
      } else if (this.holding > 0) {
        return;
      } else {
        this.stop(head.what, head.cost, false);
      }
    }
  }

  private stop(what: string, cost: Cost, unpriced: boolean, shared?: NamedBudget): void {
    const stop = { what, cost, spent: this.spentNow, unpriced, ...(shared ? { shared } : {}) };
    this.stopReason = stop;
    for (const listener of this.stopListeners) listener(stop);
    for (const waiter of this.waiting.splice(0)) waiter.done(false);
  }

  /** Spent that was not after all (a request refused, withdrawn, claimed elsewhere): room again. */
  giveBack(cost: { seconds: number; credits: number | undefined }): void {
    this.spentNow = add(this.spentNow, { seconds: -cost.seconds, credits: -(cost.credits ?? 0) });
    this.serve();
  }

  /** Whether `cost` fits under every cap after what is spent (nothing reserved). */
  fits(cost: Cost): boolean {
    const { maxSeconds, maxCredits } = this.caps;
    if (maxSeconds !== undefined && this.spentNow.seconds + cost.seconds > maxSeconds + CAP_TOLERANCE)
      return false;
    if (maxCredits !== undefined && this.spentNow.credits + cost.credits > maxCredits + CAP_TOLERANCE)
      return false;
    return true;
  }
}

function add(a: Cost, b: Cost): Cost {
  return { seconds: a.seconds + b.seconds, credits: a.credits + b.credits };
}
