// The engine: drives jobs to a final state, recording every step in the state file before relying
// on it. Per job: resolve its assets (upload / speech, deduplicated), wait for a generation slot,
// write the intent, submit, record the task id, poll until final, release the slot, download, write
// its record. At most `concurrency` generations are unfinished at once, across every manifest.
// One engine serves a one-shot `run` (src/run/run-batch.ts) and a long-lived `watch`, which adds
// and withdraws manifests' jobs while it works; those drivers write the reports.
import { setMaxListeners } from "node:events";
import { isAbsolute, join, relative, resolve } from "node:path";
import { setImmediate as setImmediatePromise } from "node:timers/promises";
import PQueue from "p-queue";
import {
  isFatalServiceError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  ProtocolError,
  RateLimitError,
  type ServiceClient,
  ServerError,
  ServiceError,
  ServiceUnreachableError,
  ValidationError,
} from "../client/index.js";
import { formatDuration } from "../duration.js";
import { OutputDiskError, ReelError } from "../errors.js";
import { type Logger, silentLogger } from "../log/logger.js";
import { type AssetRef, type Job, type SpeechRef, toGenerationRequest } from "../manifest/index.js";
import { ensureJobRecord, resultOf, writeJobRecord } from "../output/job-record.js";
import { FINAL_STATUSES, type Id, type TaskStatus } from "../service/api-types.js";
import {
  type JobRow,
  type NewJob,
  StateFileError,
  type StateStore,
  type VideoFacts,
  versionKey,
} from "../state/store.js";
import { checkJournal, lostCommitsMessage } from "../output/recovery.js";
import { type AssetResolver, makeAssetResolver, SpeechUncertainError } from "./assets.js";
import { asDiskFailure, ensureRealDir, removeStaleTempFiles } from "../output/atomic-write.js";
import { DownloadError, downloadVideo } from "../output/download.js";
import { compactJournal, type JournalWriter, openJournal, readJournal } from "../output/journal.js";
import { lockOutDir, probeWritable } from "../output/out-dir.js";
import { videoFile } from "../output/layout.js";
import { checkSavedVideo, stampOfPath } from "../output/video-check.js";
import {
  keepChangedVideo,
  keepPreviousVersion,
  keptName,
  takeBackName,
  type VersionsContext,
} from "../output/versions.js";
import { DEFAULT_POLL_TIMING, nextPollDelay, type PollTiming, RunRateEstimator } from "./poll-schedule.js";
import { type ProgressSink, silentProgress } from "./progress.js";
import { makeStoppableSleep } from "./stoppable-sleep.js";

export interface EngineOptions {
  readonly client: ServiceClient;
  readonly store: StateStore;
  readonly outDir: string;
  /** Remote sources are fetched here before upload. */
  readonly cacheDir: string;
  /** Fetch https sources from loopback, link-local and private addresses too. @defaultValue false */
  readonly allowPrivateSources?: boolean;
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
  /**
   * What a rejected key or exhausted credits do: "stop" ends all work (a one-shot run exits 3);
   * "pause" holds every call to the service, checks again with backoff, and goes on when the
   * condition clears (watch mode). @defaultValue "stop"
   */
  readonly onFatal?: "stop" | "pause";
  /** Called after each job changes in a way results.jsonl shows (watch mode rewrites it). */
  readonly onJobChange?: () => void;
  /**
   * Called once if the state file, or the disk of the output folder, can no longer be written: the
   * engine has stopped all work.
   */
  readonly onStateFailure?: (error: StateFileError | OutputDiskError) => void;
}

export interface Engine {
  /**
   * Makes `jobs` the wanted jobs of `manifest` (watch: a manifest appeared or changed) and starts
   * what they need. Jobs of the manifest that are no longer wanted are not submitted if they were
   * not yet; those already submitted are followed to the end (their credits are spent).
   */
  setManifestJobs(manifest: string, jobs: readonly Job[]): Promise<void>;
  /** The manifest is gone: none of its unsubmitted jobs is submitted any more. */
  dropManifest(manifest: string): void;
  /** Follows every task of this service still unfinished in the state file (those `which` picks). */
  followInFlight(which?: (row: JobRow) => boolean): void;
  /** Makes the manifest's output folder (see setManifestJobs, which does it too): a run checks them all first. */
  prepareDir(manifest: string): Promise<void>;
  /** Resolves once no job is being worked on. */
  whenIdle(): Promise<void>;
  /** The current row of every wanted job, manifest by manifest. `versions`: store.jobsByVersion(), if read. */
  wantedRows(versions?: Map<string, JobRow>): JobRow[];
  /** The condition that stopped the engine ("stop" mode; a full disk in both modes), if any. */
  readonly fatal: ServiceError | OutputDiskError | undefined;
  /** Whether all work was stopped: by the signal, or by a fatal condition other than no credits. */
  readonly stopped: boolean;
  /**
   * Stops listening to the signal and unlocks the output folder. Work in progress is not awaited (see
   * whenIdle).
   */
  dispose(): void;
}

/**
 * How long a submission already on the wire may finish after Ctrl-C, so its answer is recorded: one
 * cut off is `uncertain`, a task perhaps paid for whose id is lost. Most answers take milliseconds;
 * a slow service gets this long (said on screen), and a second Ctrl-C still quits at once.
 */
const SUBMIT_GRACE_MS = 15_000;
/**
 * Submissions refused for the moment (429 or 503 past the client's own retries) are tried again
 * after 1 s doubling up to 60 s; after this many in one run, the rest are left pending.
 */
const MAX_TRANSIENT_REFUSALS = 50;
/** Queue priority of tasks already on the service: they go before any new submission. */
const IN_FLIGHT = Number.MAX_SAFE_INTEGER;
/** Checks of a paused service (watch mode): from 1 s, doubling, up to 60 s apart. */
const PAUSE_PROBE_MS = { first: 1_000, max: 60_000 } as const;
/**
 * The longest the service may ask reel to wait (Retry-After) within a run. A longer wait is not sat
 * through: the work it holds is parked (left as it is, said on screen, taken up by the next run),
 * since a run that sleeps for hours looks hung and a service asking for days is broken.
 */
const LONGEST_WAIT_MS = 15 * 60_000;
/**
 * Answers about one task that reel cannot read (not JSON, an unknown status, a body too long), in a
 * row, before it stops following the task this run. They are asked again with backoff from the poll
 * interval's floor, doubling to its ceiling: ten span about 3 minutes against a remote service, so a
 * proxy's error page during a deploy is ridden out, and a service that only sends what reel cannot
 * read is not polled for 24 hours. The task id is kept: the next run follows it again.
 */
const MAX_UNREADABLE_ANSWERS = 10;

export async function makeEngine(options: EngineOptions): Promise<Engine> {
  const { client, store, outDir } = options;
  const outKey = resolve(outDir);
  /** Whether `row`'s file is recorded in this output folder (rows of earlier reels: taken to be). */
  const isInOut = (row: JobRow): boolean => row.out_dir === null || row.out_dir === outKey;
  const versions: VersionsContext = { store, outDir, outKey };
  const log = options.logger ?? silentLogger;
  const progress = options.progress ?? silentProgress;
  const maxAttempts = options.maxAttempts ?? 3;
  const pollTiming = options.pollTiming ?? DEFAULT_POLL_TIMING;
  const pollDeadlineMs = options.pollDeadlineMs ?? 24 * 3600_000;
  const onFatal = options.onFatal ?? "stop";
  const changed = (): void => options.onJobChange?.();

  // `stop` ends all work: a rejected key ("stop" mode) or the user's interrupt. No credits ends only
  // the work that costs (see handleFatal).
  const stop = new AbortController();
  // Every in-flight request listens on `stop`: many listeners are expected.
  setMaxListeners(0, stop.signal);
  const sleep = makeStoppableSleep(stop.signal);
  let fatal: ServiceError | OutputDiskError | undefined;
  const onUserAbort = (): void => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onUserAbort();
  options.signal?.addEventListener("abort", onUserAbort, { once: true });
  // Submissions get a grace period after `stop`, so an answer on its way is still recorded.
  const submitAbort = new AbortController();
  setMaxListeners(0, submitAbort.signal);
  /** Submissions sent and not answered yet. */
  let submissionsOnWire = 0;
  stop.signal.addEventListener(
    "abort",
    () => {
      if (submissionsOnWire > 0) {
        progress.event({
          stage: "note",
          detail: `waiting up to ${SUBMIT_GRACE_MS / 1000} s for the answer to ${submissionsOnWire} submission(s) already sent, so that what was paid is recorded; Ctrl-C again quits at once (they are then marked uncertain)`,
        });
      }
      // A fresh reason, never the fatal ServiceError that stopped us: a submission cut off here may
      // have reached the service, so it must be recorded as uncertain, not as a definite refusal.
      setTimeout(
        () =>
          submitAbort.abort(new ReelError("E_INTERRUPTED", "stopped while the submission was on the wire")),
        SUBMIT_GRACE_MS,
      ).unref();
    },
    { once: true },
  );

  // The journal of submissions in this output folder, read once: entries the state file does not
  // know mean it lost commits, and a rerun on it would pay for them again (see output/journal.ts).
  const scope = store.journalScope!;
  const journaled = checkJournal(store, readJournal(outDir, scope));
  if (journaled.unknown.length > 0) {
    throw new StateFileError(lostCommitsMessage(store.path, outDir, journaled.unknown));
  }
  // Answers a crash kept from the state file but not from the journal: followed, not uncertain.
  for (const [rowId, taskId] of journaled.answered) store.markSubmitted(rowId, taskId);
  if (journaled.answered.length > 0) {
    progress.event({
      stage: "note",
      detail: `${journaled.answered.length} submission(s) of an interrupted run were answered (the journal in ${outDir} kept the task id): followed`,
    });
  }
  const interrupted = store.markInterruptedSubmissionsUncertain();
  if (interrupted > 0) {
    progress.event({
      stage: "note",
      detail: `${interrupted} submission(s) of an interrupted run have an unknown outcome: marked uncertain`,
    });
  }
  store.markInterruptedSpeechUncertain();
  const repeatedUploads = store.takeInterruptedUploads();
  if (repeatedUploads > 0) {
    progress.event({
      stage: "note",
      detail: `${repeatedUploads} upload(s) of an earlier run may have reached the service without an answer; they are uploaded again if needed (uploads cost no credits)`,
    });
  }
  await ensureRealDir(outDir, { mayBeLink: true });
  // Held until dispose: from here on, temp files in the folder are this engine's own or a dead run's.
  const outLock = lockOutDir(outDir);
  let journal: JournalWriter;
  try {
    probeWritable(outDir);
    await removeStaleTempFiles(outDir);
    journal = openJournal(outDir, scope);
  } catch (error) {
    outLock.release();
    throw asDiskFailure(error, outDir) ?? error;
  }

  const concurrency = options.concurrency ?? 4;
  const downloadConcurrency = options.downloadConcurrency ?? 4;
  const slots = new PQueue({ concurrency });
  const transfers = new PQueue({ concurrency: options.uploadConcurrency ?? 4 });
  const downloads = new PQueue({ concurrency: downloadConcurrency });
  // Jobs are admitted to work a few at a time, longest first, so that a batch of 10,000 holds a
  // queued closure per job rather than 10,000 suspended chains of promises. Enough are admitted to
  // keep every generation slot and download busy, with a generation's worth more ready to submit.
  const admission = new PQueue({ concurrency: 2 * concurrency + downloadConcurrency + 16 });
  // Jobs already done only need their files checked: a lane of their own, so 10,000 checks at the
  // start of a rerun never delay the first submission.
  const checks = new PQueue({ concurrency: 16 });
  const polls = new PQueue({ intervalCap: options.pollsPerSecond ?? 20, interval: 1_000 });
  const rate = new RunRateEstimator();
  const resolver: AssetResolver = makeAssetResolver({
    client,
    store,
    queue: transfers,
    cacheDir: options.cacheDir,
    allowPrivateSources: options.allowPrivateSources ?? false,
    resubmitUncertain: options.resubmitUncertain ?? false,
    signal: stop.signal,
    costedSignal: submitAbort.signal,
    // Named as the manifest names them; the hash tells apart two files of one name.
    onUpload: (source, sha) =>
      progress.event({ stage: "uploaded", detail: `${shownPath(source)} (sha256 ${sha.slice(0, 12)})` }),
    onSpeech: (voice, text) =>
      progress.event({
        stage: "speech",
        detail: `voice ${voice}: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text)}`,
      }),
  });

  // ---- fatal conditions: stop, or pause until they clear ----

  let pause: { promise: Promise<void>; resume: () => void } | undefined;
  let transientRefusals = 0;
  /** Until when new submissions are parked: the service asked to wait longer than LONGEST_WAIT_MS. */
  let submissionsParkedUntil = 0;
  let probeDelay: number = PAUSE_PROBE_MS.first;
  const announced = new Set<string>();

  /**
   * A run whose service has never answered, and whose calls cannot even connect (connection
   * refused, unknown host): the address is wrong or the service is down. Said at once, rather than
   * submissions waiting on it with backoff for an hour.
   */
  function unreachable(error: unknown): ServiceError | undefined {
    if (onFatal !== "stop" || !(error instanceof NetworkError) || error.sent || client.answered)
      return undefined;
    return new ServiceUnreachableError(
      `cannot reach the service at ${client.baseUrl} (${error.message}). Check --base-url (REEL_BASE_URL) and that the service is up; nothing was sent, rerun once it answers.`,
      error,
    );
  }

  /** True when `error` is fatal; in "pause" mode the caller then awaits `whenServiceUsable` and retries. */
  function handleFatal(thrown: unknown): boolean {
    const error = isFatalServiceError(thrown) ? thrown : unreachable(thrown);
    if (error === undefined) return false;
    if (onFatal === "stop") {
      if (!fatal) {
        fatal = error;
        log.error({ code: error.code, endpoint: error.endpoint }, error.message);
        if (error.code === "E_CREDITS") {
          // Nothing more is paid for, but what was paid for is collected: following a task and
          // fetching its video cost no credits. Ctrl-C leaves them to the next run.
          progress.event({
            stage: "note",
            detail:
              "no credits left: nothing more is submitted; tasks already submitted are followed and their videos downloaded (Ctrl-C leaves them to the next run)",
          });
        } else {
          stop.abort(error);
        }
      }
      return true;
    }
    if (!pause) {
      let resume: () => void = () => {};
      const promise = new Promise<void>((resolve) => {
        resume = resolve;
      });
      pause = { promise, resume };
      // Said once per condition, not once per job, and again only after it cleared.
      if (!announced.has(error.code)) {
        announced.add(error.code);
        progress.event({
          stage: "note",
          // The client's message ends with what a one-shot run needs ("..., then rerun"): a watcher
          // needs no rerun.
          detail: `paused: ${error.message.replace(/,? then rerun\b[^.]*\./, ".")} Checking again with backoff; work resumes by itself.`,
        });
      }
      void probe(error);
    }
    return true;
  }

  async function probe(error: ServiceError): Promise<void> {
    while (!stop.signal.aborted) {
      await sleep(probeDelay);
      probeDelay = Math.min(PAUSE_PROBE_MS.max, probeDelay * 2);
      if (stop.signal.aborted) return;
      if (error.code === "E_CREDITS") break; // only a submission can tell: let one try again
      try {
        // Any answer but 401 (a 404 for this made-up id included) means the key is accepted.
        await client.getAsset("1", { signal: stop.signal });
        break;
      } catch (e) {
        if (!isFatalServiceError(e)) break;
      }
    }
    const current = pause;
    pause = undefined;
    current?.resume();
  }

  /** Waits while the service is paused; false when the engine stopped meanwhile. */
  async function whenServiceUsable(): Promise<boolean> {
    while (pause && !stop.signal.aborted) {
      await Promise.race([
        pause.promise,
        new Promise((r) => stop.signal.addEventListener("abort", r, { once: true })),
      ]);
    }
    return !stop.signal.aborted;
  }

  function serviceWorks(): void {
    probeDelay = PAUSE_PROBE_MS.first;
    if (announced.size > 0) {
      progress.event({ stage: "note", detail: "the service accepts calls again: resumed" });
      announced.clear();
    }
  }

  // ---- jobs wanted, and jobs being worked on ----

  const wanted = new Map<string, string>(); // job key -> spec hash of the version wanted
  const keysOf = new Map<string, Set<string>>(); // manifest -> its job keys
  const working = new Map<number, Promise<void>>(); // row id -> its processing
  const preparedDirs = new Map<string, Promise<void>>(); // manifest -> its output folder checked and cleaned
  const isWanted = (job: Job): boolean => wanted.get(job.key) === job.specHash;
  /** A version of a video whose manifest now asks for another: its files carry its hash. */
  const isSuperseded = (row: JobRow): boolean => {
    const current = wanted.get(row.job_key);
    return current !== undefined && current !== row.spec_hash;
  };

  function track(rowId: number, work: () => Promise<void>, lane: PQueue, priority = 0): void {
    if (working.has(rowId)) return;
    const promise = lane
      // Work still queued when the engine stops is skipped (a stop is prompt).
      .add(async () => (stop.signal.aborted ? undefined : work()), { priority })
      .catch((error: unknown) => {
        if (stop.signal.aborted) return;
        if (error instanceof StateFileError) {
          // Nothing more may be sent that the state file could not record.
          log.error({ err: error.message }, "state file not writable: stopping");
          stop.abort(error);
          options.onStateFailure?.(error);
          return;
        }
        if (error instanceof OutputDiskError) {
          // Every other video would meet the same disk: stop at once rather than fail them one by
          // one. Tasks keep their ids in the state file; a rerun follows them and downloads.
          if (!fatal) {
            fatal = error;
            log.error({ err: error.message }, "output disk refused a write: stopping");
            options.onStateFailure?.(error);
          }
          stop.abort(error);
          return;
        }
        if (!handleFatal(error)) log.error({ rowId, err: error }, "unexpected error");
      })
      .finally(() => working.delete(rowId));
    working.set(rowId, promise);
  }

  async function setManifestJobs(manifest: string, jobs: readonly Job[]): Promise<void> {
    const keys = new Set(jobs.map((job) => job.key));
    for (const key of keysOf.get(manifest) ?? []) if (!keys.has(key)) wanted.delete(key);
    keysOf.set(manifest, keys);
    for (const job of jobs) wanted.set(job.key, job.specHash);
    await prepareDir(manifest);
    const rows = store.upsertJobs(jobs.map(newJobOf));
    jobs.forEach((job, i) => {
      const { id, state } = rows[i]!;
      if (state === "Success") track(id, () => processJob(job, id), checks);
      // Tasks already on the service are admitted first: they hold generation slots too.
      else track(id, () => processJob(job, id), admission, state === "submitted" ? IN_FLIGHT : job.seconds);
    });
  }

  /**
   * Once per engine and manifest, before any of its work starts: the output folder is made (never
   * through a symlink) and rid of the temp files a killed run left. Later, temp files there belong
   * to downloads of this engine in progress, so it is never cleaned again.
   */
  function prepareDir(manifest: string): Promise<void> {
    let prepared = preparedDirs.get(manifest);
    if (!prepared) {
      const dir = join(outDir, manifest);
      prepared = ensureRealDir(dir).then(
        async () => {
          await removeStaleTempFiles(dir);
          // A folder that exists but refuses writes is found before the manifest's first costed call.
          probeWritable(dir);
        },
        (error: unknown) => {
          preparedDirs.delete(manifest); // checked again next time (watch: the user may fix it)
          throw error;
        },
      );
      preparedDirs.set(manifest, prepared);
    }
    return prepared;
  }

  function dropManifest(manifest: string): void {
    for (const key of keysOf.get(manifest) ?? []) wanted.delete(key);
    keysOf.delete(manifest);
  }

  function followInFlight(which: (row: JobRow) => boolean = () => true): void {
    for (const row of store.listInFlight()) {
      if (!which(row)) continue;
      track(
        row.id,
        async () => {
          await prepareDir(row.manifest);
          await followInSlot(row.id);
          await afterFinal(store.getJob(row.id));
        },
        admission,
        IN_FLIGHT,
      );
    }
  }

  async function processJob(job: Job, rowId: number): Promise<void> {
    // Read when admitted, not when queued: the row may have changed meanwhile (watch mode), or be
    // gone (a video removed from its manifest before it was sent).
    const row = store.findJobById(rowId);
    if (!row) return;
    if (row.state === "Success") {
      // The check is synchronous and quick; yielding first lets 10,000 of them at the start of a
      // rerun interleave with the submissions instead of holding them up.
      await setImmediatePromise();
      const found =
        row.file !== null && isInOut(row) ? await checkSavedVideo(join(outDir, row.file), row) : undefined;
      if (found?.kind === "same") {
        let current = found.stamp === undefined ? row : store.recordVideoStamp(row, found.stamp);
        const own = videoFile(row.manifest, row.video_id);
        // An edit undone: this version's video was kept as <id>.<hash>.mp4 while the other one
        // took <id>.mp4. It takes its name back (the other keeps its own hash name); no download.
        if (row.file !== own && isWanted(job)) {
          await downloads.add(async () => {
            await takeBackName(versions, current, own);
            changed();
          });
        } else if (current.error !== null) {
          // The video is whole: an error an earlier run recorded after saving it (its record hit a
          // full disk) is over.
          current = store.clearJobError(current);
          writeJobRecord(outDir, current, isSuperseded(current));
          changed();
        } else {
          ensureJobRecord(outDir, current);
        }
        return;
      }
      // Not the video reel saved (cut short, edited, replaced): the user's file is kept under another
      // name, never overwritten, and the video is fetched again from its task (never generated again).
      if (found?.kind === "changed") {
        const kept = await keepChangedVideo(versions, row);
        progress.event({
          stage: "note",
          key: row.job_key,
          detail: `${row.file} is not the video reel saved (cut short, edited or replaced): kept as ${kept}; the video is fetched again from task ${row.task_id} (not generated again)`,
        });
      }
      // The user deleted it, or it was fetched into another output folder (one state file can serve
      // several): fetch it again, into this one.
      // Its result address is from an earlier run: it may have expired, or (the sandbox) name a
      // server that is gone. The service is asked for the task again first.
      await download(row.file === null ? row : store.forgetDownload(row), { addressFresh: false });
      return;
    }
    if (row.state === "submitted") {
      await followInSlot(row.id);
      await afterFinal(store.getJob(row.id));
      return;
    }
    if (!mayStart(row)) {
      // A failure stays as it is; its record, written without fsync, is made again if it was lost
      // (an uncertain job's too: one found at start has none yet).
      if (row.state === "Fail" || row.state === "Canceled" || row.state === "uncertain") {
        ensureJobRecord(outDir, row);
      }
      return;
    }
    if (!(await submitAndFollow(job, row.id))) return;
    let final = store.getJob(row.id);
    if (await forgetLostAssets(job, final)) {
      if (!(await submitAndFollow(job, row.id))) return;
      final = store.getJob(row.id);
    }
    await afterFinal(final);
  }

  /** Asset ids this engine found deleted on the service: no submission may use them any more. */
  const lostAssets = new Set<string>();

  /**
   * A task that failed because an asset it names is missing or invalid on the service (deleted
   * there since reel uploaded it): reel's record of that upload is stale. Forget it, so the asset is
   * uploaded again, and let the job try once more (a counted attempt). True when it will.
   * Every asset reel made for the job is checked, not only the one named: a task fails on the first
   * lost asset it meets, and a retry with another lost one would fail again.
   */
  async function forgetLostAssets(job: Job, row: JobRow): Promise<boolean> {
    if (row.state !== "Fail" || row.fail_kind !== "task" || row.attempts >= maxAttempts) return false;
    // Only assets reel made itself can be made again (an `{asset: N}` of the manifest cannot), and
    // only those the service no longer knows: a reason that merely names an asset ("audio asset 5
    // is too long") must not cost a second submission. One another job found lost already counts
    // (its record is gone by now): this job was submitted with it before that was known.
    const named = [...(row.error ?? "").matchAll(/asset (\d+)/gi)].map((m) => m[1]!);
    const knownLost = named.filter((id) => lostAssets.has(id));
    const suspects = named.filter((id) => !lostAssets.has(id) && store.madeAsset(id));
    if (knownLost.length === 0 && suspects.length === 0) return false;
    const own = refsOf(job).flatMap((ref) => resolver.knownId(ref) ?? []);
    const lost = [...knownLost];
    for (const id of new Set([...suspects, ...own])) {
      if (lostAssets.has(id)) continue;
      try {
        await client.getAsset(id, { signal: stop.signal });
      } catch (error) {
        if (error instanceof NotFoundError) lost.push(id);
      }
    }
    if (lost.length === 0) return false;
    for (const assetId of lost) {
      if (lostAssets.has(assetId)) continue;
      lostAssets.add(assetId);
      resolver.forget(assetId);
    }
    if (!store.markPending(row.id, `asset ${lost.join(", ")} lost on the service: uploading again`)) {
      claimLost(row.id);
      return false;
    }
    progress.event({
      stage: "note",
      key: row.job_key,
      detail: `failed because asset ${lost.join(", ")} is missing on the service; uploading it again and retrying once`,
    });
    return true;
  }

  /** Jobs --retry-failed has resubmitted in this run. */
  const retried = new Set<number>();

  /** Whether a job that is not in flight should be (re)submitted now. */
  function mayStart(row: JobRow): boolean {
    switch (row.state) {
      case "pending":
        return true;
      case "Fail":
      case "Canceled":
        if (row.fail_kind === "local") return true; // nothing was sent: free to try again
        // Once per run (per watch session): a watcher reads a manifest again at every save, and each
        // save must not spend another paid attempt on the same failing video.
        if (options.retryFailed && !retried.has(row.id)) {
          if (row.attempts < maxAttempts) {
            retried.add(row.id);
            if (store.markPending(row.id, "--retry-failed")) return true;
            claimLost(row.id);
            return false;
          }
          // Else --retry-failed would seem to do nothing, as if the service kept failing.
          progress.event({
            stage: "note",
            key: row.job_key,
            detail: `not retried: ${row.attempts} of ${maxAttempts} attempts used (--max-attempts N allows more)`,
          });
        }
        return false;
      case "uncertain":
        if (options.resubmitUncertain) {
          if (store.markPending(row.id, "--resubmit-uncertain")) return true;
          claimLost(row.id);
        }
        return false;
      default:
        return false;
    }
  }

  async function resolveRefs(job: Job): Promise<Map<AssetRef | SpeechRef, Id>> {
    const refs = refsOf(job);
    // Every call is waited for, even once one failed: a speech call still retrying may be paid for,
    // and the run must not end before its answer is recorded (it would be found uncertain).
    const settled = await Promise.allSettled(refs.map((ref) => resolver.resolve(ref)));
    const errors = settled.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    if (errors.length > 0) {
      // One that may have cost credits decides what the job becomes (uncertain, not a plain failure).
      throw (
        errors.find((e) => e instanceof SpeechUncertainError || e instanceof OutcomeUnknownError) ?? errors[0]
      );
    }
    return new Map(refs.map((ref, i) => [ref, (settled[i] as PromiseFulfilledResult<Id>).value]));
  }

  /** Submits the job and follows its task. True when the task reached a final state. */
  async function submitAndFollow(job: Job, rowId: number): Promise<boolean> {
    for (;;) {
      // `fatal`: the run is ending (no credits): no new upload, speech or submission. Parked: the
      // service asked for a wait longer than a run sits through; the job stays unsent for the next.
      if (fatal || Date.now() < submissionsParkedUntil || !isWanted(job) || !(await whenServiceUsable()))
        return false;
      let ids: Map<AssetRef | SpeechRef, Id>;
      try {
        ids = await resolveRefs(job);
      } catch (error) {
        if (stop.signal.aborted) return false;
        if (handleFatal(error)) continue;
        const message = (error as Error).message;
        if (error instanceof SpeechUncertainError || error instanceof OutcomeUnknownError) {
          markUncertain(rowId, message);
        } else {
          // Said with the failure: a Fail usually means credits spent; this one cost nothing.
          const local = `${message.replace(/\.$/, "")}; nothing was sent for this video, and the next run tries it again`;
          store.markFailed(rowId, "local", local);
          // As a failure on the service: said, its record written, an earlier version moved aside.
          const failed = store.findJobById(rowId);
          if (failed) await afterFinal(failed);
        }
        changed();
        return false;
      }
      const body = toGenerationRequest(job.spec, (ref) => ids.get(ref)!);
      const outcome = await slots.add(
        async (): Promise<"final" | "retry" | "end" | number> => {
          // Checked again here: the job may have been withdrawn, or the service paused, while it queued.
          if (stop.signal.aborted || fatal || Date.now() < submissionsParkedUntil || !isWanted(job))
            return "end";
          if (pause) return "retry";
          // Another job found one of these assets deleted on the service while this one queued:
          // resolved again (uploaded again) rather than paid for with an asset known to be gone.
          if ([...ids.values()].some((id) => lostAssets.has(id))) return "retry";
          if (!(await store.markSubmitting(rowId))) {
            claimLost(rowId);
            return "end";
          }
          // The intent took a turn to reach the disk: Ctrl-C, a withdrawn manifest or a pause may have
          // come meanwhile. Nothing was sent yet, so the intent is simply taken back.
          if (stop.signal.aborted || fatal || !isWanted(job) || pause) {
            store.withdrawSubmitting(rowId);
            return pause && !stop.signal.aborted ? "retry" : "end";
          }
          // The journal's copy of the intent, before the request leaves: unwritten, nothing is sent.
          const attempt = store.attemptsOf(rowId);
          try {
            journal.sent(job, attempt);
          } catch (error) {
            store.withdrawSubmitting(rowId);
            throw asDiskFailure(error, outDir) ?? error;
          }
          let taskId: string;
          submissionsOnWire++;
          try {
            ({ id: taskId } = await client.submitGeneration(body, { signal: submitAbort.signal }));
            store.markSubmitted(rowId, taskId);
            journal.answered(job, attempt, taskId);
            serviceWorks();
            changed();
            progress.event({ stage: "submitted", key: job.key, detail: `task ${taskId}` });
            log.info({ job: job.key, taskId }, "submitted");
          } catch (error) {
            const next = recordSubmitFailure(job.key, rowId, error);
            // Refused for certain (back to pending, or rejected): nothing was created.
            const row = store.findJobById(rowId);
            if (row && (row.state === "pending" || row.fail_kind === "rejected"))
              journal.notCreated(job, attempt);
            return next;
          } finally {
            submissionsOnWire--;
          }
          const submitted = {
            task_id: taskId,
            task_status: "PreProcessing",
            seconds: job.seconds,
            job_key: job.key,
          };
          return (await follow(rowId, submitted)) ? "final" : "end";
        },
        // Longest first: the slots then end the batch together instead of waiting on one long straggler.
        { priority: job.seconds },
      );
      if (typeof outcome === "number") {
        // The service said "not now" (429, 503, refused connection) past the client's retries.
        transientRefusals++;
        noteWaiting(outcome);
        await sleep(outcome);
        continue;
      }
      if (outcome !== "retry") return outcome === "final";
    }
  }

  /**
   * The state file refused this run's claim on a job (see store.markSubmitting): its row moved on
   * since this run read it, which only another process writing the same state file does. Nothing is
   * sent; said, since the job's outcome is then that other process's.
   */
  function claimLost(rowId: number): void {
    const row = store.findJobById(rowId);
    const detail = `not submitted: the state file shows this job ${row ? resultOf(row).status : "removed"}${row?.task_id ? ` (task ${row.task_id})` : ""}, changed by another process using the same state file; nothing was sent for it by this run`;
    log.warn({ rowId, state: row?.state }, detail);
    progress.event({ stage: "note", key: row?.job_key, detail });
    changed();
  }

  /** A submission that may have reached the service: said, and recorded beside the other jobs' records. */
  function markUncertain(rowId: number, message: string): void {
    store.markUncertain(rowId, message);
    const row = store.findJobById(rowId);
    if (!row) return; // a video removed before it was sent (watch): its speech alone stays uncertain
    progress.event({ stage: "uncertain", key: row.job_key, detail: message });
    writeJobRecord(outDir, row, isSuperseded(row));
  }

  let waitingNoted = 0;
  /** Says, at most once a minute, that submissions wait on the service: else a long wait looks like a hang. */
  function noteWaiting(ms: number): void {
    log.warn({ waitMs: ms }, "the service refused submissions for now; waiting");
    if (Date.now() - waitingNoted < 60_000) return;
    waitingNoted = Date.now();
    progress.event({
      stage: "note",
      detail: `the service refuses new submissions for now (busy, rate limited, or not reachable): waiting ${formatDuration(ms)} before trying again`,
    });
  }

  /**
   * Records why a submission did not go through. Returns "retry" (after a pause), a delay in ms
   * (a transient refusal: submit again after it), or "end".
   */
  function recordSubmitFailure(key: string, rowId: number, error: unknown): "retry" | "end" | number {
    if (error instanceof ValidationError) {
      store.markFailed(rowId, "rejected", error.message);
      progress.event({ stage: "failed", key, detail: error.message });
    } else if (
      error instanceof ServiceError &&
      !(error instanceof OutcomeUnknownError) &&
      // After our own abort, only a request known never to have left is a definite refusal.
      (!submitAbort.signal.aborted || (error instanceof NetworkError && !error.sent))
    ) {
      // A definite refusal (401, 402, 429/503 past the retries, connection refused): nothing was
      // created, so no attempt was spent and the job goes back to pending.
      store.markRefused(rowId, error.message);
      if (handleFatal(error)) return onFatal === "pause" ? "retry" : "end";
      const transient =
        error instanceof RateLimitError ||
        (error instanceof ServerError && error.status === 503) ||
        (error instanceof NetworkError && !error.sent);
      const floor = (error as { retryAfterMs?: number }).retryAfterMs ?? 0;
      if (transient && floor > LONGEST_WAIT_MS) {
        parkSubmissions(floor);
        return "end";
      }
      if (transient && transientRefusals < MAX_TRANSIENT_REFUSALS) {
        return Math.max(floor, Math.min(60_000, 1_000 * 2 ** Math.min(6, transientRefusals)));
      }
      progress.event({ stage: "failed", key, detail: error.message });
    } else {
      // Outcome unknown, or our own abort while the request was on the wire.
      const message = (error as Error).message ?? String(error);
      markUncertain(rowId, message);
      // A 403 on a submission: uncertain (it may come after the work was done), and the key is in
      // doubt too: the run stops (or pauses) as for a 401, instead of each job meeting it in turn.
      if (error instanceof OutcomeUnknownError && isFatalServiceError(error.cause)) handleFatal(error.cause);
    }
    changed();
    return "end";
  }

  /** The service asked to wait `ms` before the next submission, longer than a run waits: parked. */
  function parkSubmissions(ms: number): void {
    const first = Date.now() >= submissionsParkedUntil;
    submissionsParkedUntil = Date.now() + ms;
    log.warn(
      { waitMs: ms },
      "the service asked for a wait longer than a run sits through: submissions parked",
    );
    if (!first) return;
    progress.event({
      stage: "note",
      detail: `the service asked to wait ${formatDuration(ms)} before the next submission (Retry-After), longer than reel waits in a run (${formatDuration(LONGEST_WAIT_MS)}): the jobs not sent yet stay unsent (nothing is paid for them); rerun reel later${onFatal === "pause" ? ", or save their manifest again once the wait is over" : ""}`,
    });
  }

  async function followInSlot(rowId: number): Promise<void> {
    await slots.add(() => follow(rowId), { priority: IN_FLIGHT });
  }

  /**
   * Polls a task until it is final (true), the engine stops, or its deadline passes. `known`: what the
   * caller knows of the row already (one read less per job).
   */
  async function follow(
    rowId: number,
    known?: Pick<JobRow, "task_id" | "task_status" | "seconds" | "job_key">,
  ): Promise<boolean> {
    const row = known ?? store.getJob(rowId);
    const taskId = row.task_id!;
    let status = (row.task_status ?? "PreProcessing") as TaskStatus;
    let runningSince = status === "Running" ? Date.now() : undefined;
    let pollsInStatus = 0;
    /** Polls in a row that failed, and those of them whose answer could not be read. */
    let failedPolls = 0;
    let unreadable = 0;
    // From the start of this follow: a rerun days later follows the task again for a full period.
    const deadline = Date.now() + pollDeadlineMs;
    /** Stops following the task this run: its id is kept, and the next run follows it again. */
    const leave = (why: string): false => {
      store.recordJobError(rowId, `${why}; task ${taskId} is kept, rerun reel to go on following it`);
      progress.event({ stage: "note", key: row.job_key, detail: `stopped following task ${taskId}: ${why}` });
      changed();
      return false;
    };
    while (!stop.signal.aborted) {
      const delay =
        failedPolls > 0
          ? // A poll that failed is not made again at once: a service answering what reel cannot
            // read was polled 45 times a second on loopback.
            Math.min(pollTiming.maxMs, pollTiming.minMs * 2 ** failedPolls)
          : nextPollDelay(
              {
                status,
                pollsInStatus,
                runningForMs: runningSince === undefined ? 0 : Date.now() - runningSince,
                expectedRunMs: rate.expectedRunMs(row.seconds),
              },
              pollTiming,
            );
      try {
        await sleep(delay);
        if (!(await whenServiceUsable())) return false; // also when the engine stopped meanwhile
        const task = await polls.add(() => client.getGeneration(taskId, { signal: stop.signal }));
        failedPolls = 0;
        unreadable = 0;
        if (task.status === status) {
          pollsInStatus++;
        } else {
          store.recordTaskStatus(rowId, task.status, task.resultVideoURL, task.failReason);
          changed();
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
        if (FINAL_STATUSES.has(status)) return true;
      } catch (error) {
        if (stop.signal.aborted) return false;
        // The state file can no longer be written: stop everything (see track), not poll on forever.
        if (error instanceof StateFileError) throw error;
        if (handleFatal(error)) {
          if (onFatal === "stop") return false;
          continue;
        }
        if (error instanceof NotFoundError) {
          store.markFailed(rowId, "task", `task ${taskId} is unknown to the service (404)`);
          changed();
          return true;
        }
        failedPolls++;
        // An answer reel cannot read (or a fault of its own reading it): asked again, with backoff,
        // a bounded number of times.
        if (error instanceof ProtocolError || !(error instanceof ServiceError)) {
          unreadable++;
          const what = (error as Error).message;
          if (unreadable >= MAX_UNREADABLE_ANSWERS) {
            return leave(
              `the service's answer about it could not be read ${unreadable} times in a row (${what})`,
            );
          }
          if (unreadable === 1) {
            progress.event({
              stage: "note",
              key: row.job_key,
              detail: `cannot read the service's answer about task ${taskId} (${what}): asking again with backoff, up to ${MAX_UNREADABLE_ANSWERS} times`,
            });
          }
        }
        if (error instanceof RateLimitError && error.retryAfterMs !== undefined) {
          // A Retry-After longer than the client would sleep through: this task waits, the others go
          // on; one longer than a run waits parks it for the next run.
          if (error.retryAfterMs > LONGEST_WAIT_MS) {
            return leave(
              `the service asked to wait ${formatDuration(error.retryAfterMs)} before asking about it again (Retry-After), longer than reel waits in a run`,
            );
          }
          await sleep(Math.min(error.retryAfterMs, deadline - Date.now()));
        }
        log.warn({ job: row.job_key, taskId, err: (error as Error).message }, "poll failed; will poll again");
      }
      if (Date.now() > deadline)
        return leave(`still ${status} after ${formatDuration(pollDeadlineMs)} (--poll-deadline)`);
    }
    return false;
  }

  /** What follows a task's end: its video downloaded, or its failure recorded. `row`: read since. */
  async function afterFinal(row: JobRow): Promise<void> {
    if (row.state === "Success") {
      await download(row);
      return;
    }
    if (row.state === "Fail" || row.state === "Canceled") {
      progress.event({ stage: "failed", key: row.job_key, detail: row.error ?? row.state });
      const superseded = isSuperseded(row);
      // As when it succeeds: an earlier version's video at <id>.mp4 moves to its hash name, so that
      // <id>.mp4 and <id>.json always describe the same job.
      if (!superseded) await keepPreviousVersion(versions, row, videoFile(row.manifest, row.video_id));
      writeJobRecord(outDir, row, superseded);
    }
  }

  /** `addressFresh`: the row's result URL was polled by this run (else it is asked for again). */
  async function download(finished: JobRow, { addressFresh = true } = {}): Promise<void> {
    await downloads.add(async () => {
      let row = finished;
      // A version of the video that is no longer the wanted one (its spec was edited after it was
      // submitted) keeps its result beside the current one instead of overwriting it.
      const superseded = isSuperseded(row);
      const file = superseded ? keptName(versions, row) : videoFile(row.manifest, row.video_id);
      if (!superseded) await keepPreviousVersion(versions, row, file);
      for (;;) {
        if (stop.signal.aborted) return;
        try {
          let url = addressFresh && row.result_url ? row.result_url : await refreshUrl(row);
          let video: VideoFacts;
          for (let refreshed = 0; ; refreshed++) {
            try {
              const dest = join(outDir, file);
              const saved = await downloadVideo({
                url,
                dest,
                signal: stop.signal,
                httpOrigins: options.httpOrigins ?? [],
              });
              video = { ...saved, stamp: stampOfPath(dest) };
              break;
            } catch (error) {
              // An expired address: ask the service for the task again, never resubmit.
              if (!(error instanceof DownloadError) || !error.expired || refreshed >= 2) throw error;
              url = await refreshUrl(row);
            }
          }
          row = store.markDownloaded(row, file, outKey, video);
          writeJobRecord(outDir, row, superseded);
          changed();
          progress.event({ stage: "done", key: row.job_key, detail: file });
          return;
        } catch (error) {
          // A full disk is no failure of this video: it stops the engine (see track).
          const disk = asDiskFailure(error, join(outDir, row.manifest));
          if (disk) throw disk;
          if (stop.signal.aborted) return;
          if (handleFatal(error)) {
            if (onFatal === "stop" || !(await whenServiceUsable())) return;
            continue;
          }
          const message = `download failed: ${(error as Error).message}`;
          store.recordJobError(row.id, message);
          changed();
          progress.event({ stage: "failed", key: row.job_key, detail: message });
          return;
        }
      }
    });
  }

  async function refreshUrl(row: JobRow): Promise<string> {
    const task = await client.getGeneration(row.task_id!, { signal: stop.signal });
    if (!task.resultVideoURL) throw new DownloadError(`task ${row.task_id} has no result address`, "refused");
    store.recordResultUrl(row.id, task.resultVideoURL);
    return task.resultVideoURL;
  }

  return {
    setManifestJobs,
    prepareDir,
    dropManifest,
    followInFlight,
    async whenIdle() {
      while (working.size > 0) await Promise.all([...working.values()]);
    },
    wantedRows(versions = store.jobsByVersion()) {
      const rows: JobRow[] = [];
      for (const keys of keysOf.values()) {
        for (const key of keys) {
          const row = versions.get(versionKey(key, wanted.get(key)!));
          if (row) rows.push(row);
        }
      }
      return rows;
    },
    get fatal() {
      return fatal;
    },
    get stopped() {
      return stop.signal.aborted;
    },
    dispose() {
      options.signal?.removeEventListener("abort", onUserAbort);
      journal.close();
      // Still under the folder's lock: no other reel appends meanwhile.
      store.flush();
      if (!store.writeFailure) {
        try {
          compactJournal(outDir, scope, (manifest, id, specHash, attempt) => {
            const head = store.versionHead(`${manifest}/${id}`, specHash);
            // Final, and its record written: the records hold it now.
            return (
              head !== undefined &&
              head.attempts >= attempt &&
              ((head.state === "Success" && head.file !== null) ||
                head.state === "Fail" ||
                head.state === "Canceled")
            );
          });
        } catch (error) {
          log.warn({ err: (error as Error).message }, "could not compact the journal; kept as it is");
        }
      }
      outLock.release();
    },
  };
}

/** The state file's view of a manifest job. */
export function newJobOf(job: Job): NewJob {
  return {
    key: job.key,
    manifest: job.manifest,
    videoId: job.id,
    specHash: job.specHash,
    // A file's stamp (device, inode, times) says which file was checked, for the upload; the record
    // keeps what was sent.
    specJson: JSON.stringify(job.spec, (key, value: unknown) => (key === "stamp" ? undefined : value)),
    seconds: job.seconds,
    model: job.model,
  };
}

/** A local path relative to the current folder when under it, as the user would write it. */
function shownPath(source: string): string {
  if (!isAbsolute(source)) return source; // an https address
  const rel = relative(process.cwd(), source);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? source : rel;
}

/** The assets a job's request refers to: its source image, and each chunk's audio. */
function refsOf(job: Job): (AssetRef | SpeechRef)[] {
  const refs: (AssetRef | SpeechRef)[] = [];
  if (job.spec.source) refs.push(job.spec.source);
  for (const chunk of job.spec.chunks) if (chunk.audio) refs.push(chunk.audio);
  return refs;
}
