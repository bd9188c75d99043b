// A runner of a fleet waiting for a slot of the account. When a claim finds the account's
// bound full (every slot taken across the runners), the job does not ask again on its own timer: a
// runner with fifty queued jobs would then make fifty claims every half second, each a transaction
// holding the service's row, and its own status writes (which free the slots) would queue behind
// them on its one connection: the fleet bench measured 4 runners at 2.5-3x the ideal makespan so.
// Instead the waiting jobs of a runner stand in one line, and one of them at a time tries:
// - at once when a slot of this runner frees (its task ended, or an intent was taken back): the
//   runner takes its own slot again. With nobody in its line, it tells the other runners instead
//   (`tell`: LISTEN/NOTIFY, state/pg/slot-notices.ts), and one of theirs tries at once (`noticed`);
// - every short jittered wait, for slots freed without a notice (one lost, a runner gone, the bound
//   raised); a claim that succeeds after such a wait lets the next one try too, since more slots may
//   be free. After a freed slot or a notice (one slot each), a success lets nobody else go: the
//   next would find the bound full.
// A job that finds others in the line joins it without claiming: its claim would find the bound
// full too. Claims while the bound is full: one per slot freed, and about two a second per runner.
import { BACKOFF, backoffDelay } from "../backoff.js";
import type { SlotLine, SlotTurn } from "./coordination.js";

/** The claim a waiting job makes next says by its turn (SlotTurn) whether more slots may be free. */
export class FleetSlots implements SlotLine {
  private readonly waiters: ((turn: SlotTurn) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** `tell`: tells the other runners of a slot freed here that no job of this runner waits for. */
  constructor(
    stop: AbortSignal,
    private readonly tell: () => void = () => {},
  ) {
    stop.addEventListener("abort", () => this.dispose(), { once: true });
  }

  /** How many jobs wait for a slot. */
  get size(): number {
    return this.waiters.length;
  }

  /** A claim found the bound full (or others wait already): resolves when this job's turn comes. */
  wait(): Promise<SlotTurn> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.arm();
    });
  }

  /**
   * A claim of this runner succeeded, made after `turn` (undefined: it did not wait). When the slots
   * free were not known one by one, the next waiter tries now: another may be free too.
   */
  claimed(turn?: SlotTurn): void {
    if (turn === "freed" || turn === "notice") return;
    this.letOneGo("claimed");
  }

  /** A slot of this runner freed (its task ended, or an intent was taken back): a waiter takes it. */
  freed(): void {
    if (!this.letOneGo("freed")) this.tell();
  }

  /** Another runner told of a slot it freed and does not use: a waiter of this runner tries now. */
  noticed(): void {
    this.letOneGo("notice");
  }

  /** Lets every waiter go (the engine stops). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const resolve of this.waiters.splice(0)) resolve("stop");
  }

  private letOneGo(turn: SlotTurn): boolean {
    const next = this.waiters.shift();
    if (!next) return false;
    next(turn);
    return true;
  }

  private arm(): void {
    if (this.timer !== undefined || this.waiters.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.letOneGo("timer");
        this.arm();
      },
      backoffDelay(BACKOFF.fleetFull, 0, { floorMs: 250 }),
    );
  }
}
