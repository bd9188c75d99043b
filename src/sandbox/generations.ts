// The lifecycle of a generation task: PreProcessing -> Pending -> Running -> Success | Fail, with a
// fixed number of server-side slots. Clients are judged on how they cope with tasks that wait in
// Pending behind others and take time proportional to their length, so both are emulated.
//
// Choices where the spec is silent: referenced assets are checked once, when PreProcessing ends
// (a deletion after that does not affect the task); a failed task gets its credits back; nothing
// ever moves a task to Canceled, since the API has no cancel call.

import type { Logger } from "../log/logger.js";
import type { Id, TaskStatus } from "../service/api-types.js";
import { FINAL_STATUSES } from "../service/api-types.js";
import type { AssetStore } from "./assets.js";
import type { SandboxCounters } from "./counters.js";
import type { Timers } from "./timers.js";
import type { GenerationPlan } from "./validate-generation.js";

export interface TaskRecord {
  readonly id: Id;
  status: TaskStatus;
  readonly createTime: string;
  readonly plan: GenerationPlan;
  /** Credits charged at submission. */
  readonly cost: number;
  failReason?: string;
  resultVideoURL?: string;
  resultVideoId?: Id;
}

/** The committed MP4 every successful task returns. */
export interface ResultVideo {
  readonly path: string;
  readonly size: number;
  readonly etag: string;
}

export interface GenerationDeps {
  readonly slots: number;
  readonly timeScale: number;
  readonly preProcessingMs: number;
  readonly timers: Timers;
  readonly counters: SandboxCounters;
  readonly assets: AssetStore;
  readonly nextId: () => Id;
  readonly resultVideo: ResultVideo;
  /** Gives back the credits of a task that failed. */
  readonly refund: (credits: number) => void;
  readonly logger: Logger;
}

export class Generations {
  private readonly tasks = new Map<Id, TaskRecord>();
  /** Pending tasks in arrival order: slots are handed out first come, first served. */
  private readonly pending: TaskRecord[] = [];
  private running = 0;
  private readonly deps: GenerationDeps;

  constructor(deps: GenerationDeps) {
    this.deps = deps;
  }

  create(plan: GenerationPlan, canonicalBody: string, cost: number): TaskRecord {
    const now = Date.now();
    const task: TaskRecord = {
      id: this.deps.nextId(),
      status: "PreProcessing",
      createTime: new Date(now).toISOString(),
      plan,
      cost,
    };
    this.tasks.set(task.id, task);
    this.deps.counters.countGeneration(task.id, canonicalBody, now);
    this.deps.timers.schedule(this.deps.preProcessingMs, () => this.finishPreProcessing(task));
    return task;
  }

  get(id: Id): TaskRecord | undefined {
    return this.tasks.get(id);
  }

  private move(task: TaskRecord, status: TaskStatus): void {
    task.status = status;
    this.deps.counters.countStatus(task.id, status, Date.now(), FINAL_STATUSES.has(status));
    this.deps.logger.debug({ taskId: task.id, status }, "sandbox task status");
  }

  private finishPreProcessing(task: TaskRecord): void {
    const { plan } = task;
    const problem =
      (plan.sourceAssetId === undefined
        ? undefined
        : this.deps.assets.problemWith(plan.sourceAssetId, "image")) ??
      plan.audioAssetIds.map((id) => this.deps.assets.problemWith(id, "audio")).find((p) => p !== undefined);
    if (problem !== undefined) {
      task.failReason = problem;
      this.deps.refund(task.cost);
      this.move(task, "Fail");
      return;
    }
    this.move(task, "Pending");
    this.pending.push(task);
    this.startWaiting();
  }

  private startWaiting(): void {
    while (this.running < this.deps.slots) {
      const task = this.pending.shift();
      if (!task) return;
      this.running++;
      this.move(task, "Running");
      this.deps.timers.schedule(task.plan.seconds * this.deps.timeScale * 1000, () => this.succeed(task));
    }
  }

  private succeed(task: TaskRecord): void {
    const video = this.deps.assets.add({
      id: this.deps.nextId(),
      format: "mp4",
      path: this.deps.resultVideo.path,
      size: this.deps.resultVideo.size,
      etag: this.deps.resultVideo.etag,
      ownsFile: false,
      taskId: task.id,
    });
    task.resultVideoId = video.id;
    task.resultVideoURL = video.url;
    this.running--;
    this.move(task, "Success");
    this.startWaiting();
  }
}
