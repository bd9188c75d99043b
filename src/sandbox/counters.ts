// What the emulator saw, kept as plain maps and numbers so tests and benchmarks can assert the
// promises of the README from the service's side: nothing paid twice, nothing uploaded twice, no
// more tasks in flight than asked, results fetched soon after they finish.
import { FINAL_STATUSES as FINAL, type Id, type TaskStatus } from "../service-contract/api-types.js";

/** Wall-clock milliseconds (Date.now()) of the moments of one task. */
export interface TaskTimes {
  readonly createdAt: number;
  startedAt?: number;
  /** How long it was to run when it started (the time scale and --jitter's factor), before any timer's lateness. */
  plannedRunMs?: number;
  finishedAt?: number;
  /** First time a client requested the result video (a GET of its file, any range). */
  firstDownloadAt?: number;
  /** First time a poll told a client the task had ended: finishedAt to this is the notice delay. */
  seenFinalAt?: number;
  status: TaskStatus;
}

/** Names of `faults` keys, one per kind of injected failure. */
export type FaultKind =
  "429" | "503" | "500-after-effect" | "drop-before-effect" | "drop-after-effect" | "truncated-download";

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function duplicates(map: ReadonlyMap<unknown, number>): number {
  let total = 0;
  for (const count of map.values()) total += count - 1;
  return total;
}

export class SandboxCounters {
  /** Responses per `"METHOD /route/template STATUS"`; a dropped connection counts as status `drop`. */
  readonly requests = new Map<string, number>();
  /** Generations accepted per canonical request body (sorted keys, numbers as written). */
  readonly generationsByBody = new Map<string, number>();
  /** Uploads accepted per sha256 of the content (hex). */
  readonly uploadsByHash = new Map<string, number>();
  /** Speech created per `"<voiceId>:<text>"`. */
  readonly speechByInput = new Map<string, number>();
  /** Status queries per task id (known or not). */
  readonly pollsByTask = new Map<Id, number>();
  /** Faults injected, per kind. */
  readonly faults = new Map<FaultKind, number>();
  /** Times of every task by id. */
  readonly tasks = new Map<Id, TaskTimes>();
  generationsCreated = 0;
  /** Tasks not yet in a final state, now and at most. */
  unfinished = 0;
  peakUnfinished = 0;
  /** Tasks in Running, now and at most (never above the `slots` option). */
  running = 0;
  peakRunning = 0;

  /** Responses to `method` on `route`, for one status or all. */
  requestCount(method: string, route: string, status?: number | "drop"): number {
    if (status !== undefined) return this.requests.get(`${method} ${route} ${status}`) ?? 0;
    let total = 0;
    const prefix = `${method} ${route} `;
    for (const [key, count] of this.requests) if (key.startsWith(prefix)) total += count;
    return total;
  }

  /** Generations created beyond the first for each identical body: credits a client paid twice. */
  duplicateGenerations(): number {
    return duplicates(this.generationsByBody);
  }

  duplicateUploads(): number {
    return duplicates(this.uploadsByHash);
  }

  duplicateSpeech(): number {
    return duplicates(this.speechByInput);
  }

  faultCount(kind: FaultKind): number {
    return this.faults.get(kind) ?? 0;
  }

  /** @internal The recording side, used by the sandbox modules. */
  countRequest(method: string, route: string, status: number | "drop"): void {
    bump(this.requests, `${method} ${route} ${status}`);
  }

  /** @internal */
  countFault(kind: FaultKind): void {
    bump(this.faults, kind);
  }

  /** @internal */
  countGeneration(id: Id, canonicalBody: string, now: number): void {
    this.generationsCreated++;
    bump(this.generationsByBody, canonicalBody);
    this.tasks.set(id, { createdAt: now, status: "PreProcessing" });
    this.unfinished++;
    this.peakUnfinished = Math.max(this.peakUnfinished, this.unfinished);
  }

  /** @internal */
  countStatus(id: Id, status: TaskStatus, now: number, final: boolean, runningEndsAt?: number): void {
    const times = this.tasks.get(id);
    if (!times) return;
    const wasRunning = times.status === "Running";
    times.status = status;
    if (status === "Running") {
      times.startedAt = now;
      if (runningEndsAt !== undefined) times.plannedRunMs = runningEndsAt - now;
      this.running++;
      this.peakRunning = Math.max(this.peakRunning, this.running);
    } else if (wasRunning) {
      this.running--;
    }
    if (final) {
      times.finishedAt = now;
      this.unfinished--;
    }
  }

  /** @internal */
  countDownload(taskId: Id, now: number): void {
    const times = this.tasks.get(taskId);
    if (times && times.firstDownloadAt === undefined) times.firstDownloadAt = now;
  }

  /** @internal */
  countUpload(sha256: string): void {
    bump(this.uploadsByHash, sha256);
  }

  /** @internal */
  countSpeech(voiceId: Id, text: string): void {
    bump(this.speechByInput, `${voiceId}:${text}`);
  }

  /** @internal */
  countPoll(id: Id): void {
    bump(this.pollsByTask, id);
  }

  /** @internal A poll answered with the task's status: its first final answer is when it was seen ended. */
  countAnswer(id: Id, status: TaskStatus, now: number): void {
    const times = this.tasks.get(id);
    if (times && times.seenFinalAt === undefined && times.finishedAt !== undefined && FINAL.has(status))
      times.seenFinalAt = now;
  }
}
