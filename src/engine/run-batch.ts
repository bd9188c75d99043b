// The batch runner: takes normalized jobs and drives each to a final state, recording every step in
// the state file before relying on it. Per job: resolve its assets (upload / speech, deduplicated),
// wait for a generation slot, write the intent, submit, record the task id, poll until final, release
// the slot, download, write its record. At most `concurrency` generations are unfinished at once.
import { setMaxListeners } from "node:events";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import PQueue from "p-queue";
import {
  isFatalServiceError,
  NotFoundError,
  OutcomeUnknownError,
  RateLimitError,
  type ServiceClient,
  ServiceError,
  ValidationError,
} from "../client/index.js";
import { type Logger, silentLogger } from "../log/logger.js";
import { type AssetRef, type Job, type SpeechRef, toGenerationRequest } from "../manifest/index.js";
import { writeJobRecord, writeResults } from "../report/results.js";
import { FINAL_STATUSES, type Id, type TaskStatus } from "../service/api-types.js";
import type { JobRow, StateStore } from "../state/store.js";
import { type AssetResolver, makeAssetResolver, SpeechUncertainError } from "./assets.js";
import { ensureRealDir, removeStaleTempFiles } from "./atomic-write.js";
import { DownloadError, downloadVideo, isCompleteVideo } from "./download.js";
import { DEFAULT_POLL_TIMING, nextPollDelay, type PollTiming, RunRateEstimator } from "./poll-schedule.js";
import { type ProgressSink, silentProgress } from "./progress.js";

export interface RunBatchOptions {
  readonly jobs: readonly Job[];
  readonly client: ServiceClient;
  readonly store: StateStore;
  readonly outDir: string;
  /** Remote sources are fetched here before upload. */
  readonly cacheDir: string;
  /** Generations unfinished (submitted, not final) at once. @defaultValue 4 */
  readonly concurrency?: number;
  /** Resubmit jobs that ended Fail or Canceled (a new attempt, counted). @defaultValue false */
  readonly retryFailed?: boolean;
  /** Resubmit jobs whose submission outcome is unknown. @defaultValue false */
  readonly resubmitUncertain?: boolean;
  /** Attempts per job in all, for --retry-failed. @defaultValue 3 */
  readonly maxAttempts?: number;
  readonly pollTiming?: PollTiming;
  /** Global cap on status polls per second, all tasks together. @defaultValue 20 */
  readonly pollsPerSecond?: number;
  /** Stop following a task after this long (its id is kept; a rerun goes on). @defaultValue 24 h */
  readonly pollDeadlineMs?: number;
  /** @defaultValue 4 */
  readonly uploadConcurrency?: number;
  /** @defaultValue 4 */
  readonly downloadConcurrency?: number;
  /** Origins whose result videos may be fetched over plain http (the sandbox). */
  readonly httpOrigins?: readonly string[];
  readonly logger?: Logger;
  readonly progress?: ProgressSink;
  /** Aborted on Ctrl-C / SIGTERM: stop starting work, record what is in hand, return quickly. */
  readonly signal?: AbortSignal;
}

export interface RunSummary {
  readonly outcome: "completed" | "fatal" | "interrupted";
  /** The error that stopped the run (rejected key, exhausted credits). */
  readonly fatal?: ServiceError;
  /** The current row of every job of the run, after the run. */
  readonly rows: readonly JobRow[];
}

/** How long a submission already on the wire may finish after Ctrl-C, so its answer is recorded. */
const SUBMIT_GRACE_MS = 1_500;

export async function runBatch(options: RunBatchOptions): Promise<RunSummary> {
  const { client, store, outDir } = options;
  const log = options.logger ?? silentLogger;
  const progress = options.progress ?? silentProgress;
  const maxAttempts = options.maxAttempts ?? 3;
  const pollTiming = options.pollTiming ?? DEFAULT_POLL_TIMING;
  const pollDeadlineMs = options.pollDeadlineMs ?? 24 * 3600_000;

  // `stop` ends all work: a fatal service condition or the user's interrupt.
  const stop = new AbortController();
  // Every sleeping poll and queued task listens on `stop`: thousands of listeners are expected.
  setMaxListeners(0, stop.signal);
  let fatal: ServiceError | undefined;
  const onUserAbort = (): void => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onUserAbort();
  options.signal?.addEventListener("abort", onUserAbort, { once: true });
  // Submissions get a grace period after `stop`, so an answer on its way is still recorded.
  const submitAbort = new AbortController();
  setMaxListeners(0, submitAbort.signal);
  stop.signal.addEventListener(
    "abort",
    () => setTimeout(() => submitAbort.abort(stop.signal.reason), SUBMIT_GRACE_MS).unref(),
    { once: true },
  );

  const interrupted = store.markInterruptedSubmissionsUncertain();
  if (interrupted > 0) {
    progress.event({
      stage: "note",
      detail: `${interrupted} submission(s) of an interrupted run have an unknown outcome: marked uncertain`,
    });
  }
  store.markInterruptedSpeechUncertain();
  // Output folders are made (and checked not to be planted symlinks) once per run. This run holds
  // the state lock, so temp files in them are leftovers of a killed run.
  const manifestNames = [...new Set(options.jobs.map((job) => job.manifest))];
  await ensureRealDir(outDir);
  await Promise.all(manifestNames.map((name) => ensureRealDir(join(outDir, name))));
  await Promise.all([outDir, ...manifestNames.map((name) => join(outDir, name))].map(removeStaleTempFiles));

  const slots = new PQueue({ concurrency: options.concurrency ?? 4 });
  const transfers = new PQueue({ concurrency: options.uploadConcurrency ?? 4 });
  const downloads = new PQueue({ concurrency: options.downloadConcurrency ?? 4 });
  const polls = new PQueue({ intervalCap: options.pollsPerSecond ?? 20, interval: 1_000 });
  const rate = new RunRateEstimator();
  const resolver: AssetResolver = makeAssetResolver({
    client,
    store,
    queue: transfers,
    cacheDir: options.cacheDir,
    resubmitUncertain: options.resubmitUncertain ?? false,
    signal: stop.signal,
    onUpload: (sha) => progress.event({ stage: "uploaded", detail: sha.slice(0, 12) }),
    onSpeech: (voice) => progress.event({ stage: "speech", detail: `voice ${voice}` }),
  });

  function haltOnFatal(error: unknown): boolean {
    if (!isFatalServiceError(error)) return false;
    if (!fatal) {
      fatal = error;
      log.error({ code: error.code, endpoint: error.endpoint }, error.message);
      stop.abort(error);
    }
    return true;
  }

  const jobRows = store.upsertJobs(
    options.jobs.map((job) => ({
      key: job.key,
      manifest: job.manifest,
      videoId: job.id,
      specHash: job.specHash,
      specJson: JSON.stringify(job.spec),
      seconds: job.seconds,
      model: job.model,
    })),
  );
  const entries = options.jobs.map((job, i) => ({ job, row: jobRows[i]! }));
  const done = await Promise.all(
    entries.map(
      ({ row }) => row.state === "Success" && row.file !== null && isCompleteVideo(join(outDir, row.file)),
    ),
  );
  progress.start(entries.length, done.filter(Boolean).length);

  // Tasks already on the service take their slots first: they are unfinished generations too.
  const ordered = entries
    .map((entry, index) => ({ ...entry, complete: done[index]! }))
    .sort((a, b) => Number(b.row.state === "submitted") - Number(a.row.state === "submitted"));

  async function processJob(job: Job, row: JobRow, complete: boolean): Promise<void> {
    if (complete) return;
    if (row.state === "Success") {
      if (row.file !== null) store.forgetDownload(row.id); // the user deleted it: fetch it again
      await download(row.id);
      return;
    }
    if (row.state === "submitted") {
      await slots.add(() => follow(row.id), { priority: Number.MAX_SAFE_INTEGER });
      await afterFinal(row.id);
      return;
    }
    if (!(await mayStart(row))) return;
    await submitAndFollow(job, row.id);
    await afterFinal(row.id);
  }

  /** Whether a job that is not in flight should be (re)submitted in this run. */
  async function mayStart(row: JobRow): Promise<boolean> {
    switch (row.state) {
      case "pending":
        return true;
      case "Fail":
      case "Canceled":
        if (row.fail_kind === "local") return true; // nothing was sent: free to try again
        if (options.retryFailed && row.attempts < maxAttempts) {
          store.markPending(row.id, "--retry-failed");
          return true;
        }
        return false;
      case "uncertain":
        if (options.resubmitUncertain) {
          store.markPending(row.id, "--resubmit-uncertain");
          return true;
        }
        return false;
      default:
        return false;
    }
  }

  async function resolveRefs(job: Job): Promise<Map<AssetRef | SpeechRef, Id>> {
    const refs: (AssetRef | SpeechRef)[] = [];
    if (job.spec.source) refs.push(job.spec.source);
    for (const chunk of job.spec.chunks) if (chunk.audio) refs.push(chunk.audio);
    const ids = await Promise.all(refs.map((ref) => resolver.resolve(ref)));
    return new Map(refs.map((ref, i) => [ref, ids[i]!]));
  }

  async function submitAndFollow(job: Job, rowId: number): Promise<void> {
    let ids: Map<AssetRef | SpeechRef, Id>;
    try {
      ids = await resolveRefs(job);
    } catch (error) {
      if (stop.signal.aborted || haltOnFatal(error)) return;
      if (error instanceof SpeechUncertainError || error instanceof OutcomeUnknownError) {
        store.markUncertain(rowId, (error as Error).message);
        progress.event({ stage: "uncertain", key: job.key, detail: (error as Error).message });
      } else {
        store.markFailed(rowId, "local", (error as Error).message);
        progress.event({ stage: "failed", key: job.key, detail: (error as Error).message });
      }
      return;
    }
    const body = toGenerationRequest(job.spec, (ref) => ids.get(ref)!);
    await slots.add(
      async () => {
        if (stop.signal.aborted) return;
        store.markSubmitting(rowId);
        try {
          const { id: taskId } = await client.submitGeneration(body, { signal: submitAbort.signal });
          store.markSubmitted(rowId, taskId);
          progress.event({ stage: "submitted", key: job.key, detail: `task ${taskId}` });
          log.info({ job: job.key, taskId }, "submitted");
        } catch (error) {
          recordSubmitFailure(job.key, rowId, error);
          return;
        }
        await follow(rowId);
      },
      // Longest first: the slots then end the batch together instead of waiting on one long straggler.
      { priority: job.seconds },
    );
  }

  function recordSubmitFailure(key: string, rowId: number, error: unknown): void {
    if (error instanceof ValidationError) {
      store.markFailed(rowId, "rejected", error.message);
      progress.event({ stage: "failed", key, detail: error.message });
    } else if (error instanceof ServiceError && !(error instanceof OutcomeUnknownError)) {
      // A definite refusal (401, 402, 429/503 past the retries, connection refused): nothing was
      // created, so the job goes back to pending and the next run submits it.
      store.markPending(rowId, error.code);
      store.recordJobError(rowId, error.message);
      if (!haltOnFatal(error)) progress.event({ stage: "failed", key, detail: error.message });
    } else {
      // Outcome unknown, or our own abort while the request was on the wire.
      const message = (error as Error).message ?? String(error);
      store.markUncertain(rowId, message);
      progress.event({ stage: "uncertain", key, detail: message });
    }
  }

  /** Polls a task until it is final, the run stops, or its deadline passes. */
  async function follow(rowId: number): Promise<void> {
    const row = store.getJob(rowId);
    const taskId = row.task_id!;
    let status = (row.task_status ?? "PreProcessing") as TaskStatus;
    let runningSince = status === "Running" ? Date.now() : undefined;
    let pollsInStatus = 0;
    const deadline = (row.submitted_at ?? Date.now()) + pollDeadlineMs;
    while (!stop.signal.aborted) {
      const delay = nextPollDelay(
        {
          status,
          pollsInStatus,
          runningForMs: runningSince === undefined ? 0 : Date.now() - runningSince,
          expectedRunMs: rate.expectedRunMs(row.seconds),
        },
        pollTiming,
      );
      try {
        await sleep(delay, undefined, { signal: stop.signal });
        const task = await polls.add(() => client.getGeneration(taskId, { signal: stop.signal }));
        if (task.status === status) {
          pollsInStatus++;
        } else {
          store.recordTaskStatus(rowId, task.status, task.resultVideoURL, task.failReason);
          if (task.status === "Running") {
            runningSince = Date.now();
            progress.event({ stage: "running", key: row.job_key });
          }
          if (FINAL_STATUSES.has(task.status) && runningSince !== undefined) {
            rate.observe(Date.now() - runningSince, row.seconds);
          }
          status = task.status;
          pollsInStatus = 0;
        }
        if (FINAL_STATUSES.has(status)) return;
      } catch (error) {
        if (stop.signal.aborted || haltOnFatal(error)) return;
        if (error instanceof NotFoundError) {
          store.markFailed(rowId, "task", `task ${taskId} is unknown to the service (404)`);
          return;
        }
        if (error instanceof RateLimitError && error.retryAfterMs !== undefined) {
          // A Retry-After longer than the client would sleep through: park this task only.
          await sleep(error.retryAfterMs, undefined, { signal: stop.signal }).catch(() => {});
        }
        log.warn({ job: row.job_key, taskId, err: (error as Error).message }, "poll failed; will poll again");
      }
      if (Date.now() > deadline) {
        store.recordJobError(
          rowId,
          `still ${status} after ${Math.round(pollDeadlineMs / 60_000)} min; task ${taskId} is kept, rerun reel to go on following it`,
        );
        return;
      }
    }
  }

  async function afterFinal(rowId: number): Promise<void> {
    const row = store.getJob(rowId);
    if (row.state === "Success") {
      await download(rowId);
      return;
    }
    if (row.state === "Fail" || row.state === "Canceled") {
      progress.event({ stage: "failed", key: row.job_key, detail: row.error ?? row.state });
      await writeJobRecord(outDir, row);
    }
  }

  async function download(rowId: number): Promise<void> {
    await downloads.add(async () => {
      if (stop.signal.aborted) return;
      let row = store.getJob(rowId);
      const file = `${row.manifest}/${row.video_id}.mp4`;
      try {
        let url = row.result_url ?? (await refreshUrl(row));
        for (let refreshed = 0; ; refreshed++) {
          try {
            await downloadVideo({
              url,
              dest: join(outDir, file),
              signal: stop.signal,
              httpOrigins: options.httpOrigins ?? [],
            });
            break;
          } catch (error) {
            // An expired address: ask the service for the task again, never resubmit.
            if (!(error instanceof DownloadError) || !error.expired || refreshed >= 2) throw error;
            url = await refreshUrl(row);
          }
        }
        store.markDownloaded(rowId, file);
        row = store.getJob(rowId);
        await writeJobRecord(outDir, row);
        progress.event({ stage: "done", key: row.job_key, detail: file });
      } catch (error) {
        if (stop.signal.aborted || haltOnFatal(error)) return;
        const message = `download failed: ${(error as Error).message}`;
        store.recordJobError(rowId, message);
        progress.event({ stage: "failed", key: row.job_key, detail: message });
      }
    });
  }

  async function refreshUrl(row: JobRow): Promise<string> {
    const task = await client.getGeneration(row.task_id!, { signal: stop.signal });
    if (!task.resultVideoURL) throw new DownloadError(`task ${row.task_id} has no result address`, "refused");
    store.recordResultUrl(row.id, task.resultVideoURL);
    return task.resultVideoURL;
  }

  await Promise.all(
    ordered.map(({ job, row, complete }) =>
      processJob(job, row, complete).catch((error: unknown) => {
        // Queue aborts after a stop are expected; anything else is a bug worth its stack.
        if (stop.signal.aborted) return;
        if (!haltOnFatal(error)) log.error({ job: job.key, err: error }, "unexpected error");
        throw error;
      }),
    ),
  );
  options.signal?.removeEventListener("abort", onUserAbort);
  progress.stop();

  const rows = entries.map(({ row }) => store.getJob(row.id));
  await writeResults(outDir, rows);
  const outcome = fatal ? "fatal" : stop.signal.aborted ? "interrupted" : "completed";
  return fatal ? { outcome, fatal, rows } : { outcome, rows };
}
