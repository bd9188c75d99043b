// Notifications: a consumer of the event stream (events/bus.ts), as the --events file is. It turns the
// events a person is needed for, or waits for, into messages (a run ended, a manifest finished in a
// watch, the run stopped or paused, a budget at 80% and 100%, failures gathered at most once a
// minute) and hands them to each target's poster, which posts them off the run's path. What a
// message says comes from the stream alone, but for one case: a store gone cannot record the
// run's end, so the end the session said is told instead.
import { hostname } from "node:os";
type Writable = Pick<NodeJS.WritableStream, "write">;
import { makeScrubber, scrubStrings } from "../client/scrub.js";
import { DEFAULTS } from "../defaults.js";
import type { EventBus } from "../events/bus.js";
import type { StreamEvent } from "../events/types.js";
import {
  eventNotification,
  failuresNotification,
  type Notification,
  type NotifyCounts,
  runEndedNotification,
} from "./messages.js";
import { onEndEnvironment, runOnEnd } from "./on-end.js";
import { NotifyPoster } from "./poster.js";
import type { NotifyTarget } from "./targets.js";

export interface NotifierOptions {
  readonly command: "run" | "watch";
  readonly targets: readonly NotifyTarget[];
  /** REEL_NOTIFY_SECRET. */
  readonly secret?: string;
  /** Never in a message: the API key, the store's password (each replaced, in any encoding). */
  readonly secrets: readonly string[];
  /** --on-end CMD, with the environment it inherits. */
  readonly onEnd?: {
    readonly command: string;
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly cwd: string;
  };
  readonly outDir: string;
  /** A line for the user (said once per target). */
  readonly warn: (line: string) => void;
  /** A line for the log file. */
  readonly log: (line: string) => void;
  /** Where --on-end's output goes. */
  readonly output: Writable;
  /** @defaultValue Date.now */
  readonly now?: () => number;
}

export class Notifier {
  private readonly posters: NotifyPoster[];
  private readonly scrubs: ((text: string) => string)[];
  private readonly counts = { done: 0, failed: 0, uncertain: 0 };
  private runner = `${hostname()}:${process.pid}`;
  /** Failures not told yet: how many, and the first few. */
  private pending = { count: 0, first: [] as StreamEvent[] };
  private failuresTimer: NodeJS.Timeout | undefined;
  private failuresToldAt = -Infinity;
  private ended: StreamEvent | undefined;
  private budgetFullSaid = false;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: NotifierOptions) {
    this.posters = options.targets.map(
      (target) =>
        new NotifyPoster(target, {
          ...(options.secret !== undefined && { secret: options.secret }),
          warn: options.warn,
          log: options.log,
        }),
    );
    this.scrubs = options.secrets.filter((s) => s !== "").map(makeScrubber);
  }

  /** Follows `bus` (the store reads its events back for it: see EventBus). */
  listen(bus: EventBus): void {
    this.unsubscribe = bus.subscribe((events) => this.take(events));
  }

  /** A batch of committed events: counted, and the few a person is told of queued. Never waits. */
  take(events: readonly StreamEvent[]): void {
    for (const event of events) {
      switch (event.type) {
        case "job.downloaded":
          this.counts.done++;
          continue;
        case "job.failed":
        case "job.uncertain":
          if (event.type === "job.failed") this.counts.failed++;
          else this.counts.uncertain++;
          this.failure(event);
          continue;
        case "run.started":
          this.runner = event.runner || this.runner;
          continue;
        case "run.ended":
          this.ended = event;
          this.tellFailures();
          this.send(
            runEndedNotification(this.options.command, event.runner, endOf(event), this.countsNow(), event),
          );
          continue;
        case "budget.threshold":
        case "budget.reached": {
          // A named budget's shares are told by the store, once between every runner sharing it
          // (its 100% by the runner the budget first refused): its stop of this run is no news.
          if (event.budget !== undefined) {
            if (event.type === "budget.threshold") this.tell(event);
            continue;
          }
          const full = event.type === "budget.reached" || event.percent === 100;
          // 100% is told once: reaching the cap and the stop it makes are one news.
          if (full && this.budgetFullSaid) continue;
          if (full) this.budgetFullSaid = true;
          this.tell(event);
          continue;
        }
        case "manifest.finished":
        case "service.stopped":
        case "service.paused":
          this.tell(event);
          continue;
        default:
          continue;
      }
    }
    // Failures of one batch told together; the first in a minute at once.
    if (this.pending.count > 0 && !this.failuresTimer) {
      const wait = this.failuresToldAt + DEFAULTS.notify.failuresEveryMs - this.now();
      if (wait <= 0) this.tellFailures();
      else {
        this.failuresTimer = setTimeout(() => this.tellFailures(), wait);
        this.failuresTimer.unref();
      }
    }
  }

  /**
   * The run ended (the stream's last events told): failures not told yet are, the run's end if the
   * store could not record it (`ended`: as the session said it; `error`: why), --on-end is run, and
   * the messages still on their way are waited for, at most DEFAULTS.notify.exitWaitMs.
   */
  async close(
    ended: { readonly outcome: string; readonly exitCode?: number } | undefined,
    error?: unknown,
  ): Promise<void> {
    this.unsubscribe?.();
    this.tellFailures();
    const outcome = this.ended ? endOf(this.ended) : (ended ?? { outcome: "error" });
    if (!this.ended) {
      const reason =
        error instanceof Error
          ? `${this.scrub(error.message)} (the store could not record the run's end)`
          : "the store could not record the run's end";
      this.send(
        runEndedNotification(
          this.options.command,
          this.runner,
          { ...outcome, reason },
          this.countsNow(),
          undefined,
        ),
      );
    }
    const onEnd = this.options.onEnd;
    await Promise.all([
      onEnd &&
        runOnEnd(
          { ...onEnd, output: this.options.output, warn: this.options.warn },
          onEndEnvironment(this.options.command, outcome, this.countsNow(), this.options.outDir),
        ),
      ...this.posters.map((poster) => poster.drain(DEFAULTS.notify.exitWaitMs)),
    ]);
  }

  private countsNow(): NotifyCounts {
    return { ...this.counts };
  }

  private failure(event: StreamEvent): void {
    this.pending.count++;
    if (this.pending.first.length < DEFAULTS.notify.reasonsShown) this.pending.first.push(event);
  }

  private tellFailures(): void {
    clearTimeout(this.failuresTimer);
    this.failuresTimer = undefined;
    if (this.pending.count === 0) return;
    const { count, first } = this.pending;
    this.pending = { count: 0, first: [] };
    this.failuresToldAt = this.now();
    this.send(failuresNotification(this.options.command, first[0]?.runner ?? this.runner, count, first));
  }

  private tell(event: StreamEvent): void {
    const notification = eventNotification(this.options.command, event);
    if (notification) this.send(notification);
  }

  private send(notification: Notification): void {
    if (this.posters.length === 0) return;
    // A copy: the events are the bus's, shared with its other listeners.
    const body = JSON.stringify(
      scrubStrings(JSON.parse(JSON.stringify(notification)) as unknown, (text) => this.scrub(text)),
    );
    for (const poster of this.posters) poster.post(body);
  }

  private scrub(text: string): string {
    let out = text;
    for (const scrub of this.scrubs) out = scrub(out);
    return out;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function endOf(event: StreamEvent): { outcome: string; exitCode?: number } {
  return {
    outcome: event.outcome ?? "error",
    ...(event.exitCode !== undefined && { exitCode: event.exitCode }),
  };
}
