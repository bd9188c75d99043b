// The console account's balance, as the emulator keeps it. Choices where the spec is silent
// ("cost per operation: not shown"): a generation costs one credit per second of video, charged
// when it is accepted and given back if the task fails; speech and uploads cost nothing, but
// speech is refused once the balance is exhausted (0), like every costed call of an empty account.

export class CreditLedger {
  private current: number | undefined;

  /** `undefined` is an unlimited balance. */
  constructor(balance: number | undefined) {
    this.current = balance;
  }

  balance(): number | undefined {
    return this.current;
  }

  set(balance: number | undefined): void {
    this.current = balance;
  }

  /** Takes `cost` when the balance covers it; otherwise returns the refusal message and takes nothing. */
  charge(cost: number, what: string): string | undefined {
    if (this.current === undefined) return undefined;
    if (this.current < cost) {
      return `Insufficient credits: ${what} costs ${cost} credits and the balance is ${this.current}`;
    }
    this.current -= cost;
    return undefined;
  }

  /** Why a free call is refused: an exhausted account, or undefined. */
  refuseWhenExhausted(what: string): string | undefined {
    if (this.current === undefined || this.current > 0) return undefined;
    return `Insufficient credits: the balance is ${this.current}; ${what} needs a positive balance`;
  }

  refund(cost: number): void {
    if (this.current !== undefined) this.current += cost;
  }
}
