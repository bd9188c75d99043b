// A runner of a fleet waiting for a slot of the account. When a claim finds the account's
// bound full (every slot taken across the runners), the job does not ask again on its own timer: a
// runner with fifty queued jobs would then make fifty claims every half second, each a transaction
// holding the service's row, and its own status writes (which free the slots) would queue behind
// them on its one connection: the fleet bench measured 4 runners at 2.5-3x the ideal makespan so.
// Instead the waiting jobs of a runner stand in one line, and one of them at a time tries:
// - at once when a slot of this runner frees (its task ended, or an intent was taken back): the
//   runner takes its own slot again. With nobody in its line, it tells the other runners instead
//   (`tell`: LISTEN/NOTIFY, state/pg/slot-notices.ts), and one of theirs takes it (`offered`);
// - every short jittered wait, for slots freed without a notice (one lost, a hold run out, a runner
//   gone, the bound raised); a claim that succeeds after such a wait lets the next one try too, since
//   more slots may be free. After a freed slot or a notice (one slot each), a success lets nobody else
//   go: the next would find the bound full.
// A slot told to every runner is one slot: were every runner with a line to claim it at once, all
// but one would find the bound full, a claim per runner for each slot told. So a runner answers a
// notice after a random pause of up to NOTICE_SPREAD_MS and says so to the others (`take`), who
// then let it be. And the runner that told of it yields it meanwhile: its next job, which may come a
// moment later, waits in its line rather than take the slot back before a waiting runner's pause
// ends; after YIELD_MS, if nobody said they took it, one of its waiting jobs tries. Not when nobody
// took the last slot it told of: then nobody waits, likely (runners idle beside one at work), and
// its jobs are not held back for them.
// A job that finds others in the line joins it without claiming: its claim would find the bound
// full too.
import { BACKOFF, backoffDelay } from "../backoff.js";
import type { SlotOffer, SlotTold } from "../state/job-store.js";
import type { SlotLine, SlotTurn } from "./coordination.js";

/**
 * The longest pause before a runner answers another's notice of a freed slot: far longer than a
 * notice takes to reach the runners of one database (a millisecond or so), so that the first to
 * answer is heard by the others before their own pause ends; far shorter than a generation.
 */
export const NOTICE_SPREAD_MS = 25;

/** How long a slot told to the other runners is left to them: their pauses, and the "took" on its way. */
export const YIELD_MS = 2 * NOTICE_SPREAD_MS;

/** The claim a waiting job makes next says by its turn (SlotTurn) whether more slots may be free. */
export class FleetSlots implements SlotLine {
  private readonly waiters: ((turn: SlotTurn) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly pauses = new Set<NodeJS.Timeout>();
  /** The slots told to the other runners and left to them for YIELD_MS (see above). */
  private readonly yields = new Set<NodeJS.Timeout>();
  /** The last slot told of. */
  private lastTold: SlotTold | undefined;

  /**
   * `tell`: tells the other runners of a slot freed here that no job of this runner waits for
   * (undefined: nobody to tell). `random`: the pauses' and waits' draw.
   */
  constructor(
    stop: AbortSignal,
    private readonly tell: () => SlotTold | undefined = () => undefined,
    private readonly random: () => number = Math.random,
  ) {
    stop.addEventListener("abort", () => this.dispose(), { once: true });
  }

  /** How many jobs wait for a slot, or would find none: a slot told to the others is left to them. */
  get size(): number {
    return this.waiters.length + this.yields.size;
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
    if (this.letOneGo("freed")) return;
    const told = this.tell();
    if (!told) return;
    const nobodyTookTheLast = this.lastTold !== undefined && !this.lastTold.taken;
    this.lastTold = told;
    if (nobodyTookTheLast) return;
    const left = setTimeout(() => {
      this.yields.delete(left);
      // Nobody took it: one of this runner's jobs tries (the slot is still free, or was taken since).
      if (!told.taken) this.letOneGo("freed");
    }, YIELD_MS);
    this.yields.add(left);
  }

  /**
   * Another runner told of a slot it freed and does not use: with a job waiting, this runner takes
   * it after a random pause, unless another runner said first that it does.
   */
  offered(offer: SlotOffer): void {
    if (this.waiters.length === 0) return;
    const pause = setTimeout(
      () => {
        this.pauses.delete(pause);
        if (offer.taken || this.waiters.length === 0) return;
        offer.take();
        this.letOneGo("notice");
      },
      Math.floor(this.random() * NOTICE_SPREAD_MS),
    );
    this.pauses.add(pause);
  }

  /** Lets every waiter go (the engine stops). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const pause of [...this.pauses, ...this.yields]) clearTimeout(pause);
    this.pauses.clear();
    this.yields.clear();
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
      backoffDelay(BACKOFF.fleetFull, 0, { floorMs: 250, random: this.random }),
    );
  }
}
