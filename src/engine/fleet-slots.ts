// A runner of a fleet waiting for a slot of the account (issue 18). When a claim finds the account's
// bound full (every slot taken across the runners), the job does not ask again on its own timer: a
// runner with fifty queued jobs would then make fifty claims every half second, each a transaction
// holding the service's row, and its own status writes (which free the slots) would queue behind
// them on its one connection: the fleet bench measured 4 runners at 2.5-3x the ideal makespan so.
// Instead the waiting jobs of a runner stand in one line, and one of them at a time tries: at once
// when a slot of this runner frees (its task ended, or an intent was taken back), or when a claim
// of this runner succeeded (another slot may be free too); and one every short jittered wait, for
// slots that other runners free. Claims while the bound is full: about two a second per runner.
import { BACKOFF, backoffDelay } from "../backoff.js";

export class FleetSlots {
  private readonly waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(stop: AbortSignal) {
    stop.addEventListener("abort", () => this.dispose(), { once: true });
  }

  /** How many jobs wait for a slot. */
  get size(): number {
    return this.waiters.length;
  }

  /** A claim found the bound full: resolves when this job's turn to try again comes. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.arm();
    });
  }

  /** A claim of this runner succeeded: another slot may be free too, the next waiter tries now. */
  claimed(): void {
    this.letOneGo();
  }

  /** A slot of this runner freed (its task ended, or an intent was taken back): a waiter tries now. */
  freed(): void {
    this.letOneGo();
  }

  /** Lets every waiter go (the engine stops). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  private letOneGo(): void {
    const next = this.waiters.shift();
    if (!next) return;
    next();
  }

  private arm(): void {
    if (this.timer !== undefined || this.waiters.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.letOneGo();
        this.arm();
      },
      backoffDelay(BACKOFF.fleetFull, 0, { floorMs: 250 }),
    );
  }
}
