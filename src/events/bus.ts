// In-process subscription to the event stream: the --events file is one listener; notifications and
// other consumers subscribe the same way, and get the same events, after the store committed them.
import type { StreamEvent } from "./types.js";

export type EventListener = (events: readonly StreamEvent[]) => void;

export class EventBus {
  private readonly listeners: EventListener[] = [];

  /**
   * @param onFirst called when the first listener subscribes (the store is then read back: a run
   * nobody listens to reads nothing).
   */
  constructor(private readonly onFirst: () => void = () => {}) {}

  /** `listener` gets each batch of committed events, in order; returns the unsubscribe. */
  subscribe(listener: EventListener): () => void {
    this.listeners.push(listener);
    if (this.listeners.length === 1) this.onFirst();
    return () => {
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners.splice(at, 1);
    };
  }

  get followed(): boolean {
    return this.listeners.length > 0;
  }

  /** A listener that throws is its own fault: the others, and the run, go on. */
  publish(events: readonly StreamEvent[]): void {
    if (events.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch {
        // See above.
      }
    }
  }
}
