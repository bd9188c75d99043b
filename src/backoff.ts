// Every backoff of reel, in one table: how long to wait before the n-th try again of something that
// failed for now. The n-th wait is min(maxMs, baseMs * 2^n) (n from 0), with full jitter where many
// clients may retry together, never below the service's own Retry-After.

export interface BackoffSchedule {
  /** The first wait's ceiling. */
  readonly baseMs: number;
  /** No wait is longer. */
  readonly maxMs: number;
  /**
   * "full": a random wait in [0, ceiling) (AWS architecture blog, "Exponential Backoff And
   * Jitter"): calls that failed together do not come back together. "none": the ceiling itself.
   */
  readonly jitter: "full" | "none";
}

export const BACKOFF = {
  /**
   * The client's retries of one call (429, 5xx, a connection that failed): 250 ms doubling, at most
   * 20 s, jittered. Six tries in 120 s (DEFAULTS.retry) span about a minute of outage: a restart of
   * the service is ridden out, a service that is down is said within two minutes.
   */
  clientRetry: { baseMs: 250, maxMs: 20_000, jitter: "full" },
  /**
   * Submissions refused for the moment (429 or 503 past the client's own retries, a connection
   * refused): 1 s doubling up to 60 s, so a service that stays busy is asked once a minute, not
   * hammered. Not jittered: the engine's submissions wait behind one another in their slots.
   */
  submitRefused: { baseMs: 1_000, maxMs: 60_000, jitter: "none" },
  /**
   * Checks of a paused service (watch mode, a rejected key or no credits): from 1 s, doubling, up to
   * 60 s apart: the user's fix (a new key, credits bought) is seen within a minute.
   */
  pauseProbe: { baseMs: 1_000, maxMs: 60_000, jitter: "none" },
  /**
   * In a fleet, waits for another runner's upload or speech of the same content (its intent won):
   * from 250 ms, doubling to 2 s, jittered. An upload takes seconds, and the answer is used as soon
   * as it is recorded.
   */
  otherRunner: { baseMs: 250, maxMs: 2_000, jitter: "full" },
  /**
   * In a fleet, a claim that found the account's bound full (every slot taken across the runners):
   * asked again within 250 ms to 750 ms, jittered so that runners waiting together do not ask
   * together. Short beside a generation: a slot that frees is taken soon.
   */
  fleetFull: { baseMs: 750, maxMs: 750, jitter: "full" },
  /**
   * A shared store (PostgreSQL) that does not answer: asked again from 250 ms, doubling to 5 s,
   * jittered (every waiting operation of every runner asks; a restart of the server takes seconds).
   */
  storeOutage: { baseMs: 250, maxMs: 5_000, jitter: "full" },
  /**
   * A notification a receiver did not take (--notify: an error status, no answer): from 1 s,
   * doubling to 30 s, jittered (the runners of a fleet post to one chat). DEFAULTS.notify.attempts
   * tries span about a minute.
   */
  notifyRetry: { baseMs: 1_000, maxMs: 30_000, jitter: "full" },
  /**
   * A result download that broke off (reset, truncated, 5xx): from 400 ms, doubling to 5 s,
   * jittered (the downloads of a run fail together when the link does). A download costs nothing:
   * it is tried ten times, and a try that got further starts the waits over.
   */
  downloadRetry: { baseMs: 400, maxMs: 5_000, jitter: "full" },
} as const satisfies Record<string, BackoffSchedule>;

/**
 * Polls of one task that failed in a row: from the poll interval's floor, doubling to its ceiling
 * or a hundred floors, whichever is less (a service answering what reel cannot read was polled 45
 * times a second on loopback; ten such answers span about 10 s on this machine, 3 minutes remote).
 */
export function failedPollBackoff(timing: {
  readonly minMs: number;
  readonly maxMs: number;
}): BackoffSchedule {
  return { baseMs: timing.minMs, maxMs: Math.min(timing.maxMs, 100 * timing.minMs), jitter: "none" };
}

/**
 * The wait before try again number `attempt` (0: the first retry), never below `floorMs` (the
 * service's Retry-After).
 */
export function backoffDelay(
  schedule: BackoffSchedule,
  attempt: number,
  { floorMs = 0, random = Math.random }: { floorMs?: number; random?: () => number } = {},
): number {
  const ceiling = Math.min(schedule.maxMs, schedule.baseMs * 2 ** attempt);
  const wait = schedule.jitter === "full" ? Math.floor(random() * ceiling) : ceiling;
  return Math.max(floorMs, wait);
}
