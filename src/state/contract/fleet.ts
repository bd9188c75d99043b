// What a store shared by a fleet of runners adds (PostgreSQL): leases, takeovers, the account's
// bound, outages.
import type { LeaseLostError } from "../../errors/state.js";

/** A slot this runner told the others of (FleetStore.slotFree). */
export interface SlotTold {
  /** Whether another runner said it takes it. */
  readonly taken: boolean;
}

/**
 * A slot of the account another runner freed and told of: one slot, taken by whichever runner says
 * so first (see fleet/slot-line.ts). `taken`: another runner said so.
 */
export interface SlotOffer extends SlotTold {
  /** Says to the other runners that this one takes it. */
  take(): void;
}

/** Why a runner was taken for lost: silent past its lease, or its process gone (seen on its machine). */
export type LostWhy = "silent" | "gone";

/** What a takeover found and sorted (FleetStore.takeOverLost). */
export interface TakeOver {
  /** Runners found silent past their lease, or their process gone on this machine, now marked lost. */
  readonly lost: readonly {
    readonly id: number;
    readonly host: string;
    readonly pid: number;
    readonly why: LostWhy;
  }[];
  /** Submissions without an answer, now uncertain. */
  readonly uncertain: number;
  /** Tasks no live runner followed, now free to follow. */
  readonly released: number;
  /** Every task no runner follows now (released by this takeover or before): any runner may follow them. */
  readonly unheld: number;
  /** Speech calls without an answer, now uncertain. */
  readonly speech: number;
  /** Upload intents without an asset, dropped (uploaded again if needed; no credits). */
  readonly uploads: number;
}

/**
 * What a store shared by a fleet of runners adds (PostgreSQL); a state file has none. Each
 * runner holds the jobs it submits and the tasks it follows while its lease lasts (its heartbeat);
 * another runner takes the work of one silent past its lease over.
 */
export interface FleetStore {
  /** This runner's id in the store. */
  readonly runnerId: number;
  /** How long a silent runner keeps its work, in milliseconds. */
  readonly leaseMs: number;
  /** How often this runner confirms its lease, in milliseconds. */
  readonly heartbeatMs: number;
  /** Sorts the work of runners gone or silent past their lease (see TakeOver). Any time, by any runner. */
  takeOverLost(): Promise<TakeOver>;
  /**
   * Makes this runner the follower of job `id`'s task: false when a live runner follows it, or it is
   * no longer submitted.
   */
  holdTask(id: number): Promise<boolean>;
  /** Of `ids`, the jobs another live runner holds (being submitted, or their task followed). */
  heldElsewhere(ids: readonly number[]): Promise<Set<number>>;
  /**
   * True when this runner has not confirmed its lease for so long (by its own clock: it was paused,
   * or cut off) that another may have taken its work: no request may leave on an intent it holds.
   */
  leaseInDoubt(): boolean;
  /** `listener` is told once if this runner learns it was taken over: it must stop. */
  onLeaseLost(listener: (error: LeaseLostError) => void): void;
  /**
   * Tells the other runners at once that a slot of the account freed here and this runner has no job
   * waiting for it (see pg/slot-notices.ts): what became of it, or undefined when there is nobody to
   * tell. A hint: never throws, and one lost costs only a wait.
   */
  slotFree(): SlotTold | undefined;
  /** `listener` is called for each slot another runner freed and told of (slotFree), with its offer. */
  onSlotFree(listener: (offer: SlotOffer) => void): void;
  /** What the fleet is doing now (for the live display); undefined when the store does not answer. */
  view(): Promise<FleetView | undefined>;
  /**
   * `listener` is told when the store stops answering (`down`: every operation waits and tries again,
   * so no new work is taken) and when it answers again (`up`). See pg/outage.ts.
   */
  onOutage(listener: (event: OutageEvent) => void): void;
  /**
   * `listener` is told of each takeover that found something (a runner lost, its submissions made
   * uncertain, its uploads dropped), whichever call made it; those found before any listener are
   * told to the first. Returns the unsubscribe.
   */
  onTakeOver(listener: (found: TakeOver) => void): () => void;
}

/**
 * What the fleet of a service is doing now, as one runner sees it (FleetStore.view): counts of the
 * whole account, read in one statement over indexes whose size is the bound, not the jobs.
 */
export interface FleetView {
  /** Generations of the service unfinished now (being submitted, or at the service), by all runners. */
  readonly inFlight: number;
  /** Of them, this runner's. */
  readonly mine: number;
  /** Uncertain submissions still holding a slot (see pg/lease.ts UNCERTAIN_HOLD_MS). */
  readonly uncertainHeld: number;
  /** Runners of the service heard within their lease, this one included. */
  readonly runners: number;
  /** The account's bound: the smallest --concurrency of those runners (0: none said one). */
  readonly bound: number;
}

/** A shared store's outage, as the engine is told of it (FleetStore.onOutage). */
export type OutageEvent =
  | { readonly state: "down"; readonly error: string; readonly limitMs: number }
  | { readonly state: "up"; readonly downMs: number };
