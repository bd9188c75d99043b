// A PostgreSQL that goes away mid-run (a server restart, a connection reset, a network cut): a
// runner rides it out rather than fail its jobs. Every operation of a writer runs through `Outage.run`:
// one that fails for the connection is tried again, with backoff, until the store answers, so new
// work waits (no claim can be made, so nothing is submitted) and work under way waits to record its
// next step. The first such failure says the store is down, the first success after it that it is
// back (the engine shows both). Past `limitMs` of outage every waiting operation throws
// StoreUnreachableError, and the run stops (exit 3): a rerun goes on from what was recorded.
//
// A write whose connection broke may have committed or not: the client cannot tell. An idempotent
// one is simply run again. A compare-and-set is not (run again, it would find its own row moved on,
// and take it for another runner's): those give `landed`, which reads whether the first try
// committed, and is asked before every try again.
import { BACKOFF, backoffDelay } from "../../backoff.js";
import { StoreUnreachableError } from "../../errors/state.js";
import type { OutageEvent } from "../job-store.js";

/** Whether the first try of a non-idempotent write committed (see above): its result if it did. */
export type Landed<T> = () => Promise<{ readonly value: T } | undefined>;

/** Errors of the connection, not of the statement: the server restarting, the network, a timeout. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/**
 * SQLSTATEs of a server shutting down or not yet up, out of connections, or a session it ended (a
 * transaction left idle too long: sql/fleet.ts): try again.
 */
const RETRY_STATES = new Set(["57P01", "57P02", "57P03", "53300", "25P03"]);
const DRIVER_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|not queryable/i;

export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === "string" &&
    (NETWORK_CODES.has(code) || RETRY_STATES.has(code) || code.startsWith("08"))
  )
    return true;
  return DRIVER_MESSAGES.test(error.message);
}

export class Outage {
  /** When the current outage began (performance.now()); undefined while the store answers. */
  private downSince: number | undefined;
  /** The error that began the current outage. */
  private lastError: string | undefined;
  private readonly listeners: ((event: OutageEvent) => void)[] = [];

  constructor(
    /** How long an outage is ridden out; 0: not at all (a reader such as `reel status`). */
    private readonly limitMs: number,
    /** The store, as messages name it (its password masked). */
    private readonly storeName: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /**
   * `listener` is told of every change from now on, and at once if the store is down now; until the
   * function returned is called.
   */
  onChange(listener: (event: OutageEvent) => void): () => void {
    this.listeners.push(listener);
    if (this.downSince !== undefined)
      listener({ state: "down", error: this.lastError ?? "no answer", limitMs: this.limitMs });
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  /** Whether the store is unreachable now, as the last operation found it. */
  get down(): boolean {
    return this.downSince !== undefined;
  }

  /** `op`, tried again while the connection fails (see above). */
  async run<T>(op: () => Promise<T>, landed?: Landed<T>): Promise<T> {
    let tried = false;
    for (let turn = 0; ; turn++) {
      try {
        if (tried && landed) {
          const done = await landed();
          if (done) return this.answered(done.value);
        }
        tried = true;
        return this.answered(await op());
      } catch (error) {
        if (!isConnectionError(error) || this.limitMs <= 0) throw error;
        this.failed(error as Error);
        if (performance.now() - this.downSince! >= this.limitMs) throw this.gone(error as Error);
        await this.sleep(backoffDelay(BACKOFF.storeOutage, turn));
      }
    }
  }

  private answered<T>(value: T): T {
    if (this.downSince !== undefined) {
      const downMs = performance.now() - this.downSince;
      this.downSince = undefined;
      for (const listener of this.listeners) listener({ state: "up", downMs });
    }
    return value;
  }

  private failed(error: Error): void {
    if (this.downSince !== undefined) return;
    this.downSince = performance.now();
    this.lastError = error.message;
    for (const listener of this.listeners) {
      listener({ state: "down", error: error.message, limitMs: this.limitMs });
    }
  }

  private gone(error: Error): StoreUnreachableError {
    return new StoreUnreachableError(
      `the store ${this.storeName} has not answered for ${Math.round(this.limitMs / 1_000)} s (${error.message}): reel stops here, having sent nothing whose intent the store did not record. Rerun when the database is back: tasks already submitted are followed, and a submission whose answer was not recorded is uncertain, never sent again silently.`,
    );
  }
}
