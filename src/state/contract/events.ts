// The store's side of the event stream (src/events, docs/events.md).
import type { StoredEvent } from "../stored-event.js";

/** What `reel events` asks of the store's events (src/events). */
export interface EventQuery {
  /** Events after this one (its id, the stream's `seq`). @defaultValue 0 */
  readonly afterId?: number;
  /** Events recorded at or after this time (epoch ms). */
  readonly since?: number;
  /** Only events whose id is within one of these ranges (both ends included). */
  readonly within?: readonly (readonly [number, number])[];
  /** @defaultValue 1000 */
  readonly limit?: number;
}

/** The writes open at a moment (openWrites), as the store can compare them with a later moment. */
export interface OpenWrites {
  /** Whether every write open at `earlier` has ended by this moment. */
  ended(earlier: OpenWrites): boolean;
}

/**
 * The event stream's records (src/events, docs/events.md). The state changes record their events
 * in their own transaction; these add the events that are no state change, and read them back.
 */
export interface EventRecords {
  /**
   * Records an event of the stream that is no state change (`kind` its type, `detail` its fields as
   * JSON): committed with the store's next writes, or alone soon after. Never awaited, never throws;
   * lost only with the writes of the moment a crash interrupts.
   */
  noteEvent(kind: string, detail: string | null, jobKey: string | null): void;
  /** The store's events (every runner's) after `query.afterId`, oldest first. */
  readEvents(query: EventQuery): Promise<StoredEvent[]>;
  /**
   * Tells `listener` this process's events once they are committed, in the order recorded, until
   * the returned function is called (which tells the last ones first).
   */
  followOwnEvents(listener: (events: readonly StoredEvent[]) => void): () => Promise<void>;
  /**
   * Where other processes record events too (a shared store): calls `wake` after each commit of any
   * of them that recorded some, until the returned stop; undefined where it cannot (then, and where
   * the method is missing, a follower reads on a clock). Holds one of a reader's connections.
   */
  watchEventCommits?(wake: () => void): Promise<(() => Promise<void>) | undefined>;
  /**
   * Where writers commit out of the order of their event ids (a shared store): the writes open now.
   * An id not yet visible below one read can only be a write open at the read; once every write
   * open at a mark taken after the read has ended (`ended`), no id below it is still to come.
   * Undefined where ids commit in their order (one writer at a time).
   */
  openWrites?(): Promise<OpenWrites>;
  /** Deletes the events recorded before `before` (epoch ms); returns how many. */
  pruneEvents(before: number): Promise<number>;
}
