// A capped run's budget (issue 19): --max-seconds and --max-credits, counted over what this run (and
// the runs it resumes: session.ts) sent that may cost. The engine asks before each costed call:
// `take` reserves the cost, synchronously, so concurrent submissions of one process can never pass
// the cap together; a request not sent after all gives it back. The first cost that would pass a
// cap stops the budget for good: nothing more is submitted (no job is picked because it is smaller),
// what is in flight is followed, and the run ends with exit 3 (see describeStop).
import { ReelError } from "../errors.js";
import type { Job } from "../manifest/index.js";
import { type PriceTable, videoCredits } from "../prices/index.js";
import type { Model, Resolution } from "../service/api-types.js";
import type { BudgetSessionRow, JobRow, SpeechCharge, SpendTally, VideoCharge } from "../state/store.js";

export interface BudgetCaps {
  /** Seconds of video sent at most. */
  readonly maxSeconds?: number;
  /** Credits at most (needs a price list). */
  readonly maxCredits?: number;
}

/** What something costs, or was spent: seconds of video, and credits (0 without a price list). */
export interface Cost {
  readonly seconds: number;
  readonly credits: number;
}

/** Why the budget stopped the work: the first cost that would have passed a cap. */
export interface BudgetStop {
  /** What was not sent: a job's key, or a speech. */
  readonly what: string;
  readonly cost: Cost;
  /** Spent when it stopped (this session's, resumed runs included). */
  readonly spent: Cost;
  /** True when the price list has no price for it: it cannot be counted against --max-credits. */
  readonly unpriced: boolean;
}

/** A costed call the budget stopped before it was made: nothing was sent, nothing recorded. */
export class BudgetStoppedError extends ReelError {
  constructor(stop: BudgetStop) {
    super("E_BUDGET", `not sent: ${stop.what} would pass the budget's cap`);
  }
}

export class Budget {
  private spentNow: Cost;
  private stopReason: BudgetStop | undefined;
  private readonly stopListeners: ((stop: BudgetStop) => void)[] = [];

  constructor(
    readonly session: BudgetSessionRow,
    readonly caps: BudgetCaps,
    readonly prices: PriceTable | undefined,
    /** Spent by the runs this one resumes (the session's ledger when it started). */
    readonly earlier: Cost,
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

  /** The jobs among `rows` a capped run left unsent (pending), and what they would cost. */
  leftUnsent(rows: readonly JobRow[]): { jobs: number; cost: Cost } {
    let seconds = 0;
    let credits = 0;
    let jobs = 0;
    for (const row of rows) {
      if (row.state !== "pending") continue;
      const { resolution } = JSON.parse(row.spec_json) as { resolution?: Resolution };
      const cost = this.costOf(row.model as Model, resolution, row.seconds);
      jobs++;
      seconds += cost.seconds;
      credits += cost.credits ?? 0;
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
    };
  }

  /** What a speech call's intent records in the ledger (see videoCharge). */
  speechCharge(): SpeechCharge {
    return { session: this.session.id, credits: this.prices?.speech ?? null };
  }

  /**
   * Reserves `cost` for `what`: true if it fits under every cap. If not, nothing is reserved and the
   * budget stops. A cost the list cannot price (`credits` undefined) under --max-credits stops it too.
   */
  take(what: string, cost: { seconds: number; credits: number | undefined }): boolean {
    return this.admit(what, cost, true);
  }

  /**
   * `take` for a speech call of a job already admitted (its video held by a Reservation): made if it
   * fits, even once the budget stopped for a job after it. A budget that stops nothing started
   * before the stop from finishing within the cap.
   */
  takeForAdmitted(what: string, cost: Cost): boolean {
    if (this.fits(cost)) {
      this.spentNow = add(this.spentNow, cost);
      return true;
    }
    return this.admit(what, cost, true);
  }

  /**
   * Whether `cost` would fit now, nothing reserved: a job checks before it makes the speech it needs
   * (which `take` counts), so no speech is made for a video that cannot be sent. Stops it as `take`.
   */
  check(what: string, cost: { seconds: number; credits: number | undefined }): boolean {
    return this.admit(what, cost, false);
  }

  private admit(
    what: string,
    cost: { seconds: number; credits: number | undefined },
    reserve: boolean,
  ): boolean {
    if (this.stopReason) return false;
    const unpriced = cost.credits === undefined && this.caps.maxCredits !== undefined;
    const priced = { seconds: cost.seconds, credits: cost.credits ?? 0 };
    if (unpriced || !this.fits(priced)) {
      const stop = { what, cost: priced, spent: this.spentNow, unpriced };
      this.stopReason = stop;
      for (const listener of this.stopListeners) listener(stop);
      return false;
    }
    if (reserve) this.spentNow = add(this.spentNow, priced);
    return true;
  }

  /** A reserved cost whose request was not sent after all (refused, withdrawn, claimed elsewhere). */
  giveBack(cost: { seconds: number; credits: number | undefined }): void {
    this.spentNow = add(this.spentNow, { seconds: -cost.seconds, credits: -(cost.credits ?? 0) });
  }

  /** Whether `cost` fits under every cap after what is spent (nothing reserved). */
  fits(cost: Cost): boolean {
    const { maxSeconds, maxCredits } = this.caps;
    // A hair of tolerance: sums of decimal prices (0.1 + 0.2) must not refuse an exact fit.
    const EPSILON = 1e-9;
    if (maxSeconds !== undefined && this.spentNow.seconds + cost.seconds > maxSeconds + EPSILON) return false;
    if (maxCredits !== undefined && this.spentNow.credits + cost.credits > maxCredits + EPSILON) return false;
    return true;
  }
}

function add(a: Cost, b: Cost): Cost {
  return { seconds: a.seconds + b.seconds, credits: a.credits + b.credits };
}

/**
 * What a session's ledger cost: each charge at the credits recorded when it was sent; those sent with
 * no price known (no price list then, or an earlier reel's), at today's prices. Throws a message when
 * a cap in credits meets such spend the list does not price (a model removed from it since).
 */
export function costOfTally(tally: SpendTally, prices: PriceTable | undefined, caps: BudgetCaps): Cost {
  let seconds = 0;
  let credits = 0;
  for (const row of tally.videos) {
    seconds += row.seconds;
    if (row.credits !== null) {
      credits += row.credits;
      continue;
    }
    if (!prices) continue;
    const cost = videoCredits(
      prices,
      row.model as Model,
      (row.resolution ?? undefined) as Resolution | undefined,
      row.seconds,
    );
    if (cost === undefined && caps.maxCredits !== undefined) {
      throw new Error(
        `the runs this one resumes sent ${row.model}${row.resolution ? ` at ${row.resolution}` : ""}, which ${prices.file} does not price: add it, so that what they spent is counted`,
      );
    }
    credits += cost ?? 0;
  }
  for (const row of tally.speech) credits += row.credits ?? row.count * (prices?.speech ?? 0);
  return { seconds, credits };
}

/**
 * One job held against the budget from the moment it is prepared until its claim records the charge,
 * or it ends unsent: its video, and the speech calls it may need (each at the list's price), so that
 * no speech is made for a video the cap would then refuse, and jobs waiting for a slot cannot hold
 * the budget their own speech needs. A speech call made for the job is paid from what it holds.
 */
export class Reservation {
  private held = false;
  /** Of what is held, credits set aside for speech calls not made yet. */
  private allowance = 0;

  constructor(
    private readonly budget: Budget,
    private readonly what: string,
    /** The video's cost: what its claim charges. */
    readonly cost: { readonly seconds: number; readonly credits: number | undefined },
    private readonly speechCalls: number,
  ) {}

  /** Holds the cost, if not held yet: false when it does not fit (the budget then stops). */
  hold(): boolean {
    if (this.held) return true;
    const speech = this.speechCalls * this.budget.speechCost().credits;
    const total = {
      seconds: this.cost.seconds,
      credits: this.cost.credits === undefined ? undefined : this.cost.credits + speech,
    };
    this.held = this.budget.take(this.what, total);
    this.allowance = this.held ? speech : 0;
    return this.held;
  }

  /** A speech call for this job: paid from what it holds, if it holds enough. */
  payFromHold(cost: Cost): boolean {
    if (!this.held || cost.credits > this.allowance + 1e-9) return false;
    this.allowance -= cost.credits;
    return true;
  }

  /** The claim was recorded with its charge: the video is spent; speech set aside and unused is given back. */
  spent(): void {
    if (this.held) this.budget.giveBack({ seconds: 0, credits: this.allowance });
    this.held = false;
    this.allowance = 0;
  }

  /** The job ends without a claim: what it holds is given back (speech made for it stays spent). */
  release(): void {
    if (this.held)
      this.budget.giveBack({
        seconds: this.cost.seconds,
        credits: (this.cost.credits ?? 0) + this.allowance,
      });
    this.held = false;
    this.allowance = 0;
  }
}
