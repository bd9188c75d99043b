// The lifecycle of a generation task: PreProcessing -> Pending -> Running -> Success | Fail, with a
// fixed number of server-side slots. Clients are judged on how they cope with tasks that wait in
// Pending behind others and take time proportional to their length, so both are emulated.
//
// Choices where the spec is silent: referenced assets are checked once, when PreProcessing ends
// (a deletion after that does not affect the task); a failed task gets its credits back; nothing
// ever moves a task to Canceled, since the API has no cancel call.
//
// Every task carries its timeline (when PreProcessing ends, when Running ends), so a persistent
// sandbox restarted later replays the time it was down: what would have finished, finished then,
// in the order it would have, and the slots it freed went to the next waiting tasks at that moment.

import type { Logger } from "../log/logger.js";
import type { Id, TaskStatus } from "../service-contract/api-types.js";
import { FINAL_STATUSES } from "../service-contract/api-types.js";
import type { AssetStore } from "./assets.js";
import type { SandboxCounters } from "./counters.js";
import { INJECTED_FAILURE_REASON } from "./options.js";
import type { SandboxPersistence, StoredTask } from "./persistence.js";
import type { Timers } from "./timers.js";
import type { ResultVideos } from "./result-video.js";
import type { RunVariation } from "./run-variation.js";
import type { GenerationPlan } from "./validate-generation.js";

/** A task as the sandbox holds it: replaced whole on every change, never edited in place. */
export type TaskRecord = StoredTask;

export interface GenerationDeps {
  readonly slots: number;
  readonly preProcessingMs: number;
  /** How long each task runs, and which fail (run-variation.ts). */
  readonly variation: RunVariation;
  readonly timers: Timers;
  readonly counters: SandboxCounters;
  readonly assets: AssetStore;
  readonly nextId: () => Id;
  /** The video of each successful task: its request's shape and length. */
  readonly resultVideos: ResultVideos;
  /** Gives back the credits of a task that failed. */
  readonly refund: (credits: number) => void;
  readonly persistence: SandboxPersistence;
  readonly logger: Logger;
}

/** Orders ids as the int64 numbers they are ("999" before "1000"). */
function compareIds(a: Id, b: Id): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

export class Generations {
  private readonly tasks = new Map<Id, TaskRecord>();
  /** Pending tasks in arrival order: slots are handed out first come, first served. */
  private pending: Id[] = [];
  private readonly running = new Set<Id>();
  /** True while restore() replays the past: its transitions must not start timers of their own. */
  private replaying = false;
  private readonly deps: GenerationDeps;

  constructor(deps: GenerationDeps) {
    this.deps = deps;
  }

  create(plan: GenerationPlan, canonicalBody: string, cost: number): TaskRecord {
    const { deps } = this;
    const now = Date.now();
    const task: TaskRecord = {
      id: deps.nextId(),
      canonicalBody,
      plan,
      cost,
      status: "PreProcessing",
      createdAt: now,
      preProcessingEndsAt: now + deps.preProcessingMs,
      queuedAt: undefined,
      startedAt: undefined,
      runningEndsAt: undefined,
      finishedAt: undefined,
      failReason: undefined,
      resultVideoId: undefined,
    };
    deps.persistence.saveTask(task);
    this.tasks.set(task.id, task);
    deps.counters.countGeneration(task.id, canonicalBody, now);
    this.after(deps.preProcessingMs, () => this.finishPreProcessing(task.id, Date.now()));
    return task;
  }

  get(id: Id): TaskRecord | undefined {
    return this.tasks.get(id);
  }

  /**
   * Takes back the tasks a persistent sandbox stored, then brings them to `now` as if the sandbox
   * had never stopped: the down time is replayed event by event in time order, with this start's
   * slots and run times for tasks that start during it. Assets must be restored first, since
   * PreProcessing checks them.
   */
  restore(stored: readonly TaskRecord[], now: number): void {
    for (const task of stored) this.tasks.set(task.id, task);
    const byTime = (time: (t: TaskRecord) => number) => (a: TaskRecord, b: TaskRecord) =>
      time(a) - time(b) || compareIds(a.id, b.id);
    this.pending = stored
      .filter((t) => t.status === "Pending")
      .sort(byTime((t) => t.queuedAt ?? t.createdAt))
      .map((t) => t.id);
    for (const task of stored) if (task.status === "Running") this.running.add(task.id);
    const preProcessing = stored
      .filter((t) => t.status === "PreProcessing")
      .sort(byTime((t) => t.preProcessingEndsAt));

    this.replaying = true;
    try {
      this.deps.persistence.atomically(() => {
        let nextPre = 0;
        for (;;) {
          const pre = preProcessing[nextPre];
          const run = this.firstToFinish();
          const preAt = pre?.preProcessingEndsAt ?? Number.POSITIVE_INFINITY;
          const runAt = run?.runningEndsAt ?? Number.POSITIVE_INFINITY;
          if (Math.min(preAt, runAt) > now) break;
          // A finish first: the slot it frees is then there for whatever the other event queues.
          if (run && runAt <= preAt) this.succeed(run.id, runAt);
          else if (pre) {
            nextPre++;
            this.finishPreProcessing(pre.id, preAt);
          }
        }
        // Only when this start has more slots than the last: waiting tasks take them now.
        this.startWaiting(now);
      });
    } finally {
      this.replaying = false;
    }

    for (const task of this.tasks.values()) {
      if (task.status === "PreProcessing") {
        this.after(task.preProcessingEndsAt - now, () => this.finishPreProcessing(task.id, Date.now()));
      } else if (task.status === "Running") {
        this.after((task.runningEndsAt ?? now) - now, () => this.succeed(task.id, Date.now()));
      }
    }
  }

  /** The Running task that ends first (ties by id), for the replay. */
  private firstToFinish(): TaskRecord | undefined {
    let first: TaskRecord | undefined;
    for (const id of this.running) {
      const task = this.tasks.get(id);
      if (!task) continue;
      const ends = task.runningEndsAt ?? 0;
      const firstEnds = first?.runningEndsAt ?? 0;
      if (!first || ends < firstEnds || (ends === firstEnds && compareIds(task.id, first.id) < 0))
        first = task;
    }
    return first;
  }

  private after(ms: number, fn: () => void): void {
    if (!this.replaying) this.deps.timers.schedule(Math.max(0, ms), fn);
  }

  /** Stores the changed task, then shows it: a status is never visible before it is stored. */
  private move(task: TaskRecord, status: TaskStatus, at: number, change: Partial<TaskRecord>): TaskRecord {
    const next: TaskRecord = { ...task, ...change, status };
    this.deps.persistence.saveTask(next);
    this.tasks.set(next.id, next);
    this.deps.counters.countStatus(task.id, status, at, FINAL_STATUSES.has(status), change.runningEndsAt);
    this.deps.logger.debug({ taskId: task.id, status }, "sandbox task status");
    return next;
  }

  private finishPreProcessing(id: Id, at: number): void {
    const task = this.tasks.get(id);
    if (task?.status !== "PreProcessing") return;
    const { plan } = task;
    const { assets } = this.deps;
    const problem =
      (plan.sourceAssetId === undefined ? undefined : assets.problemWith(plan.sourceAssetId, "image")) ??
      plan.audioAssetIds.map((audio) => assets.problemWith(audio, "audio")).find((p) => p !== undefined);
    this.deps.persistence.atomically(() => {
      if (problem !== undefined) {
        this.deps.refund(task.cost);
        this.move(task, "Fail", at, { failReason: problem, finishedAt: at });
        return;
      }
      this.move(task, "Pending", at, { queuedAt: at });
      this.pending.push(id);
      this.startWaiting(at);
    });
  }

  private startWaiting(at: number): void {
    while (this.running.size < this.deps.slots) {
      const id = this.pending.shift();
      if (id === undefined) return;
      const task = this.tasks.get(id);
      if (!task) continue;
      const runMs = this.deps.variation.runMs(task.canonicalBody, task.plan.seconds, at);
      this.move(task, "Running", at, { startedAt: at, runningEndsAt: at + runMs });
      this.running.add(id);
      this.after(runMs, () => this.succeed(id, Date.now()));
    }
  }

  private succeed(id: Id, at: number): void {
    const task = this.tasks.get(id);
    if (task?.status !== "Running") return;
    const { deps } = this;
    if (deps.variation.fails(task.canonicalBody)) {
      deps.persistence.atomically(() => {
        deps.refund(task.cost);
        this.move(task, "Fail", at, {
          failReason: INJECTED_FAILURE_REASON,
          finishedAt: at,
        });
        this.running.delete(id);
        this.startWaiting(at);
      });
      return;
    }
    const result = deps.resultVideos.videoFor(task.plan);
    deps.persistence.atomically(() => {
      const video = deps.assets.add({
        id: deps.nextId(),
        origin: "result",
        format: "mp4",
        path: result.path,
        size: result.size,
        etag: result.etag,
        taskId: id,
      });
      this.move(task, "Success", at, { resultVideoId: video.id, finishedAt: at });
      this.running.delete(id);
      this.startWaiting(at);
    });
  }
}
