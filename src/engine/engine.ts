// The engine: drives jobs to a final state, recording every step in the state file before relying
// on it. Per job: resolve its assets (upload / speech, deduplicated), wait for a generation slot,
// write the intent, submit, record the task id, poll until final, release the slot, download, write
// its record. At most `concurrency` generations are unfinished at once, across every manifest.
// One engine serves a one-shot `run` (src/run/run-batch.ts) and a long-lived `watch`, which adds
// and withdraws manifests' jobs while it works; those drivers write the reports.
//
// This file is the facade: the queues, the set of wanted jobs, and each job's admission and path
// through the parts, which share one EngineContext (context.ts): submit.ts (submission), follow.ts
// (polling a task), deliver.ts (download, or the failure recorded), lost-assets.ts, service-gate.ts
// (fatal / pause / park), startup.ts (an interrupted run's work, the output folder's lock).
import { join } from "node:path";
import PQueue from "p-queue";
import type { ServiceError } from "../client/index.js";
import { OutputDiskError } from "../errors.js";
import { silentLogger } from "../log/logger.js";
import type { Job } from "../manifest/index.js";
import { ensureJobRecord } from "../output/job-record.js";
import { ensureRealDir, removeStaleTempFiles } from "../output/atomic-write.js";
import { probeWritable } from "../output/out-dir.js";
import { outFolderOf } from "../output/out-folder.js";
import {
  type JobRow,
  LeaseLostError,
  type NewJob,
  StateFileError,
  StoreUnreachableError,
  versionKey,
} from "../state/job-store.js";
import { DEFAULTS } from "../defaults.js";
import { shownPath } from "../user-path.js";
import { makeAssetResolver, speechAsset } from "./assets.js";
import { Backlog } from "./backlog.js";
import { type EngineContext, type EngineOptions, IN_FLIGHT, type WantedJobs } from "./context.js";
import { afterFinal, checkDone } from "./deliver.js";
import { followInSlot } from "./follow.js";
import { makeKeyedLock } from "./keyed-lock.js";
import { forgetLostAssets } from "./lost-assets.js";
import { DEFAULT_POLL_TIMING } from "./poll-schedule.js";
import { RunTimes } from "./run-times.js";
import { silentProgress } from "./progress.js";
import { ServiceGate } from "./service-gate.js";
import { makeElsewhereWaiter } from "./elsewhere.js";
import { FleetSlots } from "./fleet-slots.js";
import { noteOutage, noteTakeOver } from "./fleet-notes.js";
import { openOutput, SHARED_STALE_TEMP_MS, type OpenOutput, resumeInterrupted } from "./startup.js";
import { makeStopSignals } from "./stop-signals.js";
import { mayStart, submitAndFollow } from "./submit.js";

export type { EngineOptions } from "./context.js";

/** How often what was learned of the run times is written to the store, when it changed. */
const RUN_TIMES_SAVE_MS = 5_000;

/** A job's work found it held by another runner of the fleet: it waits, then runs again. */
const ELSEWHERE = Symbol("elsewhere");
type Worked = void | typeof ELSEWHERE;

export interface Engine {
  /**
   * Makes `jobs` the wanted jobs of `manifest` (watch: a manifest appeared or changed) and starts
   * what they need. Jobs of the manifest that are no longer wanted are not submitted if they were
   * not yet; those already submitted are followed to the end (their credits are spent).
   */
  setManifestJobs(manifest: string, jobs: readonly Job[]): Promise<void>;
  /** The manifest is gone: none of its unsubmitted jobs is submitted any more. */
  dropManifest(manifest: string): void;
  /**
   * Follows every task of this service still unfinished in the state file (those `which` picks).
   * Resolves once each is admitted to work (see whenIdle).
   */
  followInFlight(which?: (row: JobRow) => boolean): Promise<void>;
  /** Makes the manifest's output folder (see setManifestJobs, which does it too): a run checks them all first. */
  prepareDir(manifest: string): Promise<void>;
  /** Resolves once no job is being worked on. */
  whenIdle(): Promise<void>;
  /** The current row of every wanted job, manifest by manifest. `versions`: store.jobsByVersion(), if read. */
  wantedRows(versions?: Map<string, JobRow>): Promise<JobRow[]>;
  /** The condition that stopped the engine ("stop" mode; a full disk in both modes), if any. */
  readonly fatal: ServiceError | OutputDiskError | undefined;
  /** Whether all work was stopped: by the signal, or by a fatal condition other than no credits. */
  readonly stopped: boolean;
  /**
   * Why the store stopped the work, if it did: a write it refused (the disk full), or this runner of
   * a fleet taken over (LeaseLostError). The run reports it rather than its own view of the jobs.
   */
  readonly stateFailure: StateFileError | undefined;
  /**
   * Stops listening to the signal and unlocks the output folder. Work in progress is not awaited (see
   * whenIdle).
   */
  dispose(): Promise<void>;
}

export async function makeEngine(options: EngineOptions): Promise<Engine> {
  const { client, store, outDir } = options;
  const { fleet } = store;
  const out = outFolderOf(outDir);
  const log = options.logger ?? silentLogger;
  const progress = options.progress ?? silentProgress;
  const onFatal = options.onFatal ?? "stop";

  const signals = makeStopSignals(options.signal, progress);
  const stop = signals.stop;
  // Every takeover that found something is said, whichever part of the work made it.
  const quitTakeOvers = fleet?.onTakeOver((found) => noteTakeOver(found, progress));
  let output: OpenOutput;
  try {
    await resumeInterrupted(store, outDir, progress);
    output = await openOutput(outDir, store.journalScope!, { shared: fleet !== undefined });
  } catch (error) {
    quitTakeOvers?.();
    signals.dispose();
    throw error;
  }
  // The jobs waiting for a slot of the account; the slots freed here that none of them takes are told
  // to the other runners, and theirs heard.
  const fleetSlots = fleet && new FleetSlots(stop.signal, () => void fleet.slotFree());
  fleet?.onSlotFree(() => fleetSlots?.noticed());
  const elsewhere = fleet && makeElsewhereWaiter(fleet, stop.signal, Math.min(1_000, fleet.heartbeatMs), log);

  const concurrency = options.concurrency ?? DEFAULTS.concurrency;
  const downloadConcurrency = options.downloadConcurrency ?? DEFAULTS.downloadConcurrency;
  const transfers = new PQueue({ concurrency: options.uploadConcurrency ?? DEFAULTS.uploadConcurrency });
  const queues = {
    slots: new PQueue({ concurrency }),
    transfers,
    downloads: new PQueue({ concurrency: downloadConcurrency }),
    // Jobs are admitted to work a few at a time, longest first (see admit: those waiting are a small
    // entry each in a backlog). Enough are admitted to keep every generation slot and download busy,
    // with a generation's worth more ready to submit.
    admission: new PQueue({ concurrency: 2 * concurrency + downloadConcurrency + 16 }),
    // Jobs already done only need their files checked: a lane of their own, so 10,000 checks at the
    // start of a rerun never delay the first submission.
    checks: new PQueue({ concurrency: 16 }),
    polls: new PQueue({ intervalCap: options.pollsPerSecond ?? DEFAULTS.polling.perSecond, interval: 1_000 }),
  };

  // ---- jobs wanted, and jobs being worked on ----

  const wanted = new Map<string, string>(); // job key -> spec hash of the version wanted
  const keysOf = new Map<string, Set<string>>(); // manifest -> its job keys
  const working = new Map<number, Promise<void>>(); // row id -> its processing
  const backlogs = new Map<PQueue, Backlog<{ rowId: number; work: () => Promise<Worked> }>>(); // lane -> jobs not in it yet
  const waiting = new Set<number>(); // row ids in a backlog
  const preparedDirs = new Map<string, Promise<void>>(); // manifest -> its output folder checked and cleaned
  const wantedJobs: WantedJobs = {
    isWanted: (job) => wanted.get(job.key) === job.specHash,
    isSuperseded: (row) => {
      const current = wanted.get(row.job_key);
      return current !== undefined && current !== row.spec_hash;
    },
  };

  const ctx: EngineContext = {
    client,
    store,
    outDir,
    out,
    versions: { store, outDir, out },
    options: {
      maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts,
      pollTiming: options.pollTiming ?? DEFAULT_POLL_TIMING,
      pollDeadlineMs: options.pollDeadlineMs ?? DEFAULTS.pollDeadline.ms,
      onFatal,
      retryFailed: options.retryFailed ?? false,
      resubmitUncertain: options.resubmitUncertain ?? false,
      httpOrigins: options.httpOrigins ?? [],
      dispatcher: options.dispatcher,
    },
    log,
    progress,
    queues,
    signals,
    gate: new ServiceGate({ client, log, progress, onFatal, stop, sleep: signals.sleep }),
    wanted: wantedJobs,
    resolver: makeAssetResolver({
      client,
      store,
      queue: transfers,
      cacheDir: options.cacheDir,
      allowPrivateSources: options.allowPrivateSources ?? false,
      budget: options.budget,
      resubmitUncertain: options.resubmitUncertain ?? false,
      signal: stop.signal,
      costedSignal: signals.costed,
      progress,
      // Named as the manifest names them; the hash tells apart two files of one name.
      onUpload: (source, sha) =>
        progress.event({
          stage: "uploaded",
          asset: sha,
          detail: `${shownPath(options.cwd, source)} (sha256 ${sha.slice(0, 12)})`,
        }),
      onSpeech: (voice, text) =>
        progress.event({
          stage: "speech",
          asset: speechAsset(voice, text),
          detail: `voice ${voice}: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text)}`,
        }),
    }),
    journal: output.journal,
    runTimes: RunTimes.fromJSON(await store.readRunTimes()),
    lostAssets: new Set(),
    retried: new Set(),
    sending: new Set(),
    fleetSlots,
    budget: options.budget,
    videoLock: makeKeyedLock(),
    changed: () => options.onJobChange?.(),
  };
  const { gate } = ctx;
  progress.event({ stage: "run-times", learned: ctx.runTimes });
  // What is learned of the run times is kept every few seconds (a crash loses no more) and at the end.
  const saveRunTimes = async (): Promise<void> => {
    if (!ctx.runTimes.takeChanges()) return;
    try {
      await store.writeRunTimes(ctx.runTimes.toJSON());
    } catch (error) {
      log.warn({ err: (error as Error).message }, "could not keep what was learned of the run times");
    }
  };
  const runTimesSaver = setInterval(() => void saveRunTimes(), RUN_TIMES_SAVE_MS);
  // The cap reached: said once; the jobs not sent yet stay pending, and what is in flight goes on.
  // Submissions claimed within the cap before it and not answered yet are named: their lines follow.
  options.budget?.onStop((reached) => {
    const sending = [...ctx.sending];
    log.warn(
      { what: reached.what, spent: reached.spent, sending },
      "budget reached: nothing more is submitted",
    );
    const onTheirWay =
      sending.length > 0
        ? ` after ${sending.join(", ")} (claimed within the cap, their requests on their way)`
        : "";
    progress.event({
      stage: "note",
      detail: `budget reached: ${reached.unpriced ? `${reached.what} has no price in the price list` : `${reached.what} would pass ${reached.shared ? `the budget '${reached.shared.name}'` : "the cap"}`}; nothing more is submitted${onTheirWay}; tasks already submitted are followed and downloaded`,
    });
    options.onBudgetStop?.();
  });

  // A runner taken over (paused or cut off past its lease) stops: its work is the others' now.
  let stateFailure: StateFileError | undefined;
  /** Stops everything: nothing more may be sent that the store could not record, or not as its own. */
  function stopForState(error: StateFileError): void {
    if (stateFailure) return;
    stateFailure = error;
    log.error(
      { err: error.message },
      error instanceof LeaseLostError
        ? "lease lost: stopping"
        : error instanceof StoreUnreachableError
          ? "store unreachable: stopping"
          : "state file not writable: stopping",
    );
    stop.abort(error);
    options.onStateFailure?.(error);
  }
  fleet?.onLeaseLost(stopForState);
  fleet?.onOutage((event) => noteOutage(event, progress, log));
  // Every heartbeat, the work of runners gone silent is taken over, and the tasks no runner follows
  // (theirs, a stopped runner's, a late answer's) are followed here, each by the runner that holds it
  // first (their videos downloaded into its output folder).
  // One at a time: while the store does not answer, the one under way waits (state/pg/outage.ts).
  let takingOver = false;
  const takeovers =
    fleet &&
    setInterval(() => {
      if (takingOver) return;
      takingOver = true;
      void fleet
        .takeOverLost()
        .then(async (found) => {
          if (found.unheld > 0 && !stop.signal.aborted) await followInFlight();
        })
        .catch((error: unknown) => {
          // Unreachable past the limit: an idle watcher learns it here.
          if (error instanceof StoreUnreachableError) stopForState(error);
          else if (!(error instanceof StateFileError))
            log.warn({ err: (error as Error).message }, "could not take over the work of silent runners");
        })
        .finally(() => {
          takingOver = false;
        });
    }, fleet.heartbeatMs);

  /**
   * Works on job `rowId` in `lane`: once per job at a time. It waits in the lane's backlog until the
   * lane has room (see admit); call admit once the jobs of a batch are tracked.
   */
  function track(rowId: number, work: () => Promise<Worked>, lane: PQueue, priority = 0): void {
    if (working.has(rowId) || waiting.has(rowId)) return;
    let backlog = backlogs.get(lane);
    if (!backlog) backlogs.set(lane, (backlog = new Backlog()));
    backlog.add({ rowId, work }, priority);
    waiting.add(rowId);
  }

  /**
   * Hands jobs from each backlog to its lane while the lane has fewer queued than it runs at once, so
   * that the lane never idles and holds no more than that; a task already on the service goes in at
   * once (it holds a generation slot, and goes before any other). After a stop, nothing is admitted:
   * the work would be skipped anyway.
   */
  function admit(): void {
    if (stop.signal.aborted) {
      for (const backlog of backlogs.values()) backlog.clear();
      waiting.clear();
      return;
    }
    for (const [lane, backlog] of backlogs) {
      for (let next = backlog.peek(); next; next = backlog.peek()) {
        if (lane.size >= lane.concurrency && next.priority < IN_FLIGHT) break;
        backlog.take();
        waiting.delete(next.item.rowId);
        start(next.item.rowId, next.item.work, lane, next.priority);
      }
    }
  }

  /**
   * Work that finds the job held by another runner of the fleet (ELSEWHERE) waits outside the lane
   * until none holds it, then runs again.
   */
  function start(rowId: number, work: () => Promise<Worked>, lane: PQueue, priority: number): void {
    const attempt = async (): Promise<void> => {
      // Work still queued when the engine stops is skipped (a stop is prompt).
      while (
        (await lane.add(async () => (stop.signal.aborted ? undefined : work()), { priority })) === ELSEWHERE
      ) {
        await elsewhere!.until(rowId);
        if (stop.signal.aborted) return;
      }
    };
    const promise = attempt()
      .catch((error: unknown) => {
        if (stop.signal.aborted) return;
        if (error instanceof StateFileError) {
          stopForState(error);
          return;
        }
        if (error instanceof OutputDiskError) {
          // Every other video would meet the same disk: stop at once rather than fail them one by
          // one. Tasks keep their ids in the state file; a rerun follows them and downloads.
          if (!gate.fatal) {
            gate.fatal = error;
            log.error({ err: error.message }, "output disk refused a write: stopping");
            options.onStateFailure?.(error);
          }
          stop.abort(error);
          return;
        }
        if (!gate.handleFatal(error)) log.error({ rowId, err: error }, "unexpected error");
      })
      .finally(() => {
        working.delete(rowId);
        admit();
      });
    working.set(rowId, promise);
  }

  async function setManifestJobs(manifest: string, jobs: readonly Job[]): Promise<void> {
    const keys = new Set(jobs.map((job) => job.key));
    for (const key of keysOf.get(manifest) ?? []) if (!keys.has(key)) wanted.delete(key);
    keysOf.set(manifest, keys);
    for (const job of jobs) wanted.set(job.key, job.specHash);
    await prepareDir(manifest);
    const rows = await store.upsertJobs(jobs.map(newJobOf));
    jobs.forEach((job, i) => {
      const { id, state } = rows[i]!;
      if (state === "Success") track(id, () => processJob(job, id), queues.checks);
      // Tasks already on the service are admitted first: they hold generation slots too.
      else
        track(
          id,
          () => processJob(job, id),
          queues.admission,
          state === "submitted" ? IN_FLIGHT : job.seconds,
        );
    });
    admit();
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
          await removeStaleTempFiles(dir, fleet ? SHARED_STALE_TEMP_MS : 0);
          // A folder that exists but refuses writes is found before the manifest's first costed call.
          probeWritable(dir);
          // The output folder's reports list this manifest's videos from now on, whoever runs it.
          await store.recordOutManifest(out.key, manifest);
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

  async function followInFlight(which: (row: JobRow) => boolean = () => true): Promise<void> {
    for (const row of await store.listInFlight()) {
      if (!which(row)) continue;
      track(
        row.id,
        async () => {
          // Read again when admitted, as processJob does: listed in flight, the job may have been
          // worked on to its end meanwhile (the list was read while other jobs ran), and its
          // video must not be downloaded twice.
          if ((await store.getJob(row.id)).state !== "submitted") return;
          // In a fleet, only a task no live runner follows (its own left it, or went silent).
          if (fleet && !(await fleet.holdTask(row.id))) return;
          await prepareDir(row.manifest);
          await followInSlot(ctx, row.id, row.job_key);
          await afterFinal(ctx, await store.getJob(row.id));
        },
        queues.admission,
        IN_FLIGHT,
      );
    }
    admit();
  }

  /** One job's path, from the state it is in when admitted. */
  async function processJob(job: Job, rowId: number): Promise<Worked> {
    // Read when admitted, not when queued: the row may have changed meanwhile (watch mode), or be
    // gone (a video removed from its manifest before it was sent).
    const row = await store.findJobById(rowId);
    if (!row) return;
    // In a fleet: a job another runner submits, follows or downloads is left to it, and worked on
    // again once it lets go (see elsewhere.ts).
    if (fleet) {
      if (row.state === "submitting") return ELSEWHERE;
      if (row.state === "submitted" && !(await fleet.holdTask(row.id))) return ELSEWHERE;
      if (row.state === "Success" && row.file === null && (await fleet.heldElsewhere([row.id])).size > 0)
        return ELSEWHERE;
    }
    if (row.state === "Success") {
      // The display tells it from this run's own work (see made-elsewhere).
      if (fleet) progress.event({ stage: "made-elsewhere", key: job.key });
      await checkDone(ctx, job, row);
      return;
    }
    if (row.state === "submitted") {
      await followInSlot(ctx, row.id, job.key);
      await afterFinal(ctx, await store.getJob(row.id));
      return;
    }
    if (!(await mayStart(ctx, row, job))) {
      // A failure stays as it is; its record, written without fsync, is made again if it was lost
      // (an uncertain job's too: one found at start has none yet).
      if (row.state === "Fail" || row.state === "Canceled" || row.state === "uncertain") {
        ensureJobRecord(outDir, row);
        progress.event({ stage: "ended-before", key: job.key, detail: row.state });
      }
      return;
    }
    // Not final (stopped, withdrawn, parked, or its failure already said): no longer in flight.
    const dropped = (): void => progress.event({ stage: "dropped", key: job.key });
    let end = await submitAndFollow(ctx, job, row.id);
    if (end === "elsewhere") return ELSEWHERE;
    if (end === "not-final") return dropped();
    let final = await store.getJob(row.id);
    if (await forgetLostAssets(ctx, job, final)) {
      end = await submitAndFollow(ctx, job, row.id);
      if (end === "elsewhere") return ELSEWHERE;
      if (end === "not-final") return dropped();
      final = await store.getJob(row.id);
    }
    await afterFinal(ctx, final);
  }

  return {
    setManifestJobs,
    prepareDir,
    dropManifest,
    followInFlight,
    async whenIdle() {
      admit();
      while (working.size > 0) await Promise.all([...working.values()]);
    },
    async wantedRows(given) {
      const versions = given ?? (await store.jobsByVersion());
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
      return gate.fatal;
    },
    get stopped() {
      return stop.signal.aborted;
    },
    get stateFailure() {
      return stateFailure;
    },
    async dispose() {
      clearInterval(takeovers);
      clearInterval(runTimesSaver);
      if (!stateFailure) await saveRunTimes();
      elsewhere?.dispose();
      quitTakeOvers?.();
      signals.dispose();
      await output.close(store, log);
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
