// The console account's balance, as the emulator keeps it. Choices where the spec is silent
// ("cost per operation: not shown"): a generation costs one credit per second of video, charged
// when it is accepted and given back if the task fails; speech and uploads cost nothing, but
// speech is refused once the balance is exhausted (0), like every costed call of an empty account.

export class CreditLedger {
  private current: number | undefined;
  private readonly save: (balance: number | undefined) => void;

  /**
   * `undefined` is an unlimited balance. `save` receives every new balance before it takes effect,
   * so a persistent sandbox never shows a balance it would forget.
   */
  constructor(balance: number | undefined, save: (balance: number | undefined) => void = () => {}) {
    this.current = balance;
    this.save = save;
  }

  balance(): number | undefined {
    return this.current;
  }

  set(balance: number | undefined): void {
    this.save(balance);
    this.current = balance;
  }

  /** Takes `cost` when the balance covers it; otherwise returns the refusal message and takes nothing. */
  charge(cost: number, what: string): string | undefined {
    if (this.current === undefined) return undefined;
    if (this.current < cost) {
      return `Insufficient credits: ${what} costs ${cost} credits and the balance is ${this.current}`;
    }
    this.set(this.current - cost);
    return undefined;
  }

  /** Why a free call is refused: an exhausted account, or undefined. */
  refuseWhenExhausted(what: string): string | undefined {
    if (this.current === undefined || this.current > 0) return undefined;
    return `Insufficient credits: the balance is ${this.current}; ${what} needs a positive balance`;
  }

  refund(cost: number): void {
    if (this.current !== undefined) this.set(this.current + cost);
  }
}
