// A run's or watch's event stream: the recorder that notes what is no state change, the bus its
// consumers subscribe to (the --events file among them), fed with this process's events once the
// store committed them, and the bound on what the store keeps.
import type { EventRecords } from "../state/job-store.js";
import { DEFAULTS } from "../defaults.js";
import { EventBus } from "./bus.js";
import { EventsFile } from "./events-file.js";
import { EventRecorder } from "./recorder.js";
import type { StoredEvent } from "../state/stored-event.js";
import { streamEventOf } from "./stored.js";
import type { StreamEvent } from "./types.js";

export type EventStore = EventRecords;

export interface EventStreamOptions {
  readonly command: "run" | "watch";
  /** --events FILE. */
  readonly file?: string;
  /** A line for the user (the events file could not be written). */
  readonly warn: (line: string) => void;
  /** @defaultValue Date.now */
  readonly now?: () => number;
}

export class EventStream {
  readonly recorder: EventRecorder;
  readonly bus: EventBus;
  private stopFollowing: (() => Promise<void>) | undefined;
  private file: EventsFile | undefined;
  private ended: { readonly outcome: string; readonly exitCode?: number } | undefined;
  private readonly pruner: NodeJS.Timeout;

  private constructor(
    private readonly store: EventStore,
    private readonly options: EventStreamOptions,
  ) {
    this.recorder = new EventRecorder(store);
    this.bus = new EventBus(() => {
      this.stopFollowing = store.followOwnEvents((rows) => this.bus.publish(toStream(rows)));
    });
    // A watch runs for weeks: what the store keeps is pruned at the start and every few hours.
    this.pruner = setInterval(() => void this.prune(), DEFAULTS.eventsPruneEveryMs);
    this.pruner.unref();
  }

  /**
   * Opens the stream of a run or watch on `store`: its events file (caught up first), the store's
   * old events pruned, and `run.started` recorded.
   */
  static async open(store: EventStore, options: EventStreamOptions): Promise<EventStream> {
    const file = options.file === undefined ? undefined : EventsFile.open(options.file, options.warn);
    const stream = new EventStream(store, options);
    try {
      await stream.prune();
      if (file) {
        await file.catchUp(store);
        stream.file = file;
        stream.bus.subscribe((events) => file.write(events));
      }
    } catch (error) {
      file?.close();
      clearInterval(stream.pruner);
      throw error;
    }
    stream.recorder.note("run.started", undefined, { command: options.command });
    return stream;
  }

  /** Records `run.ended` (once: the first outcome said is the one). */
  end(outcome: string, exitCode?: number): void {
    if (this.ended) return;
    this.ended = { outcome, ...(exitCode !== undefined && { exitCode }) };
    this.recorder.note("run.ended", undefined, {
      command: this.options.command,
      outcome,
      ...(exitCode !== undefined && { exitCode }),
    });
  }

  /**
   * How the session said it ended, once it did: for a consumer whose `run.ended` the store could not
   * record (the store gone), the one thing it still knows.
   */
  get endedAs(): { readonly outcome: string; readonly exitCode?: number } | undefined {
    return this.ended;
  }

  /** Tells the listeners the last events, and closes the file. Before the store closes. */
  async close(): Promise<void> {
    clearInterval(this.pruner);
    try {
      await this.stopFollowing?.();
    } finally {
      this.file?.close();
    }
  }

  private async prune(): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    await this.store.pruneEvents(now - DEFAULTS.eventsKeepMs).catch(() => {});
  }
}

export function toStream(rows: readonly StoredEvent[]): StreamEvent[] {
  return rows.flatMap((row) => {
    const event = streamEventOf(row);
    return event ? [event] : [];
  });
}
