// The events that are no state change of the store's own: what the engine says of a job's transient
// steps (queued, uploading, speaking), of the service (paused, stopped), of the manifests it takes,
// and what the commands say (a run started and ended, a budget reached). Recorded in the store as
// notes (EventRecords.noteEvent), so that the stream read back from the store is the whole stream.
import type { BudgetStop, BudgetThreshold } from "../budget/budget.js";
import { describeThreshold } from "../budget/messages.js";
import type { ProgressEvent, ProgressSink } from "../engine/progress.js";
import type { EventRecords } from "../state/job-store.js";
import type { EventField, EventType } from "./types.js";

type Fields = Partial<Record<EventField, string | number>>;

export class EventRecorder implements ProgressSink {
  /** The service's pause is said once per pause (the engine says it again at each check). */
  private paused = false;
  /**
   * Jobs said queued and not heard of since but in the wait itself: in a fleet, a job that finds the
   * account's bound full goes round again (preparing, queued) until a slot frees, and is still the
   * one wait, said once (each note is a statement on the store).
   */
  private readonly queued = new Set<string>();

  constructor(private readonly store: Pick<EventRecords, "noteEvent">) {}

  note(type: EventType, job?: string, fields?: Fields): void {
    this.store.noteEvent(type, fields ? JSON.stringify(fields) : null, job ?? null);
  }

  /** `budget.reached`, said as the engine says it. */
  budgetReached(stop: BudgetStop): void {
    const reason = stop.unpriced
      ? `${stop.what} has no price in the price list`
      : `${stop.what} would pass ${stop.shared ? `the budget '${stop.shared.name}'` : "the cap"}`;
    this.note("budget.reached", stop.what.includes("/") ? stop.what : undefined, {
      reason,
      ...(stop.shared && { budget: stop.shared.name }),
    });
  }

  /** `budget.threshold`: a share of a cap passed. */
  budgetThreshold(passed: BudgetThreshold): void {
    this.note("budget.threshold", undefined, { percent: passed.percent, reason: describeThreshold(passed) });
  }

  start(): void {}
  stop(): void {}

  event(event: ProgressEvent): void {
    if (event.key && event.stage !== "queued" && event.stage !== "preparing") this.queued.delete(event.key);
    switch (event.stage) {
      case "queued":
        if (event.key && !this.queued.has(event.key)) {
          this.queued.add(event.key);
          this.note("job.queued", event.key);
        }
        return;
      case "uploading":
        if (event.key)
          this.note("job.uploading", event.key, event.detail ? { file: event.detail } : undefined);
        return;
      case "speaking":
        if (event.key)
          this.note("job.speaking", event.key, event.detail ? { voice: event.detail } : undefined);
        return;
      case "paused":
        if (!this.paused) this.note("service.paused", undefined, { reason: event.detail ?? "paused" });
        this.paused = true;
        return;
      case "resumed":
        this.paused = false;
        return;
      case "stopped":
        this.note("service.stopped", undefined, { reason: event.detail ?? "stopped" });
        return;
      case "manifest":
        this.manifests(event);
        return;
      case "finished":
        if (event.key)
          this.note("manifest.finished", undefined, { manifest: event.key, results: event.detail ?? "" });
        return;
      default:
        return;
    }
  }

  /** A run's manifests come as one event (`key` ""): one manifest.seen each. */
  private manifests(event: ProgressEvent): void {
    const jobs = event.jobs ?? [];
    if (event.key) {
      this.note("manifest.seen", undefined, { manifest: event.key, jobs: jobs.length });
      return;
    }
    const counts = new Map<string, number>();
    for (const job of jobs) {
      const manifest = job.key.slice(0, job.key.lastIndexOf("/"));
      counts.set(manifest, (counts.get(manifest) ?? 0) + 1);
    }
    for (const [manifest, n] of counts) this.note("manifest.seen", undefined, { manifest, jobs: n });
  }
}
