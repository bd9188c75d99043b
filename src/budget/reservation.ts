import type { Budget } from "./budget.js";
import { CAP_TOLERANCE, type Cost } from "./cost.js";

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

  private total(): { seconds: number; credits: number | undefined } {
    const { seconds, credits } = this.cost;
    return { seconds, credits: credits === undefined ? undefined : credits + this.speechCredits() };
  }

  private speechCredits(): number {
    return this.speechCalls * this.budget.speechCost().credits;
  }

  /**
   * Holds the cost, if not held yet: false when it does not fit (the budget then stops), or when
   * `signal` ends the wait for other holds to settle.
   */
  async hold(signal?: AbortSignal): Promise<boolean> {
    if (this.held) return true;
    this.held = await this.budget.hold(this.what, this.total(), signal);
    this.allowance = this.held ? this.speechCredits() : 0;
    return this.held;
  }

  /** `hold` without waiting (in a generation slot, where a wait would keep others from the slot). */
  holdNow(): boolean {
    if (this.held) return true;
    const { seconds, credits } = this.total();
    if (credits === undefined && this.budget.caps.maxCredits !== undefined) return false;
    this.held = this.budget.holdNow({ seconds, credits: credits ?? 0 });
    this.allowance = this.held ? this.speechCredits() : 0;
    return this.held;
  }

  /** A speech call for this job: paid from what it holds, if it holds enough. */
  payFromHold(cost: Cost): boolean {
    if (!this.held || cost.credits > this.allowance + CAP_TOLERANCE) return false;
    this.allowance -= cost.credits;
    return true;
  }

  /** The claim was recorded with its charge: the video is spent; speech set aside and unused is given back. */
  spent(): void {
    if (this.held) this.budget.settle({ seconds: 0, credits: this.allowance });
    this.held = false;
    this.allowance = 0;
  }

  /** The job ends without a claim: what it holds is given back (speech made for it stays spent). */
  release(): void {
    if (this.held)
      this.budget.settle({
        seconds: this.cost.seconds,
        credits: (this.cost.credits ?? 0) + this.allowance,
      });
    this.held = false;
    this.allowance = 0;
  }
}
