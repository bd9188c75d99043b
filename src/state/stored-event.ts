// An events row of the store (its `events` table), as both backends read it back; the event stream
// (events/stored.ts) turns it into a line.

/** An events row as both stores read it back. */
export interface StoredEvent {
  readonly id: number;
  readonly at: number;
  readonly kind: string;
  readonly detail: string | null;
  readonly jobKey: string | null;
  readonly taskId: string | null;
  readonly runner: string | null;
}
