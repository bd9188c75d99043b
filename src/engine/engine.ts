// The engine: drives jobs to a final state, recording every step in the state file before relying
// on it. Per job: resolve its assets (upload / speech, deduplicated), wait for a generation slot,
// write the intent, submit, record the task id, poll until final, release the slot, download, write
// its record. At most `concurrency` generations are unfinished at once, across every manifest.
// One engine serves a one-shot `run` (src/drivers/run-batch.ts) and a long-lived `watch`, which adds
// and withdraws manifests' jobs while it works; those drivers write the reports.
//
// This file is the facade: it opens the work (the coordination with other runners, src/fleet/; the
// output folder, startup.ts), and puts together the parts, which share one EngineContext
// (context.ts, made by build-context.ts): the wanted jobs (wanted.ts), the lanes that admit them to
// work (lanes.ts), each job's path (job-paths.ts) through submit.ts, follow.ts, deliver.ts and
// lost-assets.ts, and the service gate (service-gate.ts: fatal / pause / park).
import type { ServiceError } from "../errors/service.js";
import type { OutputDiskError } from "../errors/output.js";
import { coordinationOf } from "../fleet/index.js";
import { silentLogger } from "../log/logger.js";
import type { Job } from "../manifest/index.js";
import type { JobRow, NewJob, VersionRef } from "../state/job-store.js";
import { LeaseLostError, type StateFileError, StoreUnreachableError } from "../errors/state.js";
import { buildContext, sayBudgetStop } from "./build-context.js";
import { type EngineOptions, IN_FLIGHT } from "./context.js";
import { makeJobPaths } from "./job-paths.js";
import { makeLanes } from "./lanes.js";
import { silentProgress } from "./progress.js";
import { openOutput, type OpenOutput } from "./startup.js";
import { makeStopSignals } from "./stop-signals.js";
import { WantedSet } from "./wanted.js";

export type { EngineOptions } from "./context.js";

/** How often what was learned of the run times is written to the store, when it changed. */
const RUN_TIMES_SAVE_MS = 5_000;
/**
 * Jobs recorded in the store this many at a time. All at once, the records handed to the store and
 * its answer for 100,000 jobs were about 50 MB alive at the run's start, and the heap sized itself
 * on that peak for the rest of the run.
 */
const RECORD_SLICE = 2_000;

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
  /** The version of every wanted job, manifest by manifest, as wantedRows lists their rows. */
  wantedVersions(): Iterable<VersionRef>;
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
  const { store, outDir } = options;
  const coordination = options.coordination ?? coordinationOf(store);
  const log = options.logger ?? silentLogger;
  const progress = options.progress ?? silentProgress;
  const signals = makeStopSignals(options.signal, progress);
  const stop = signals.stop;

  // Why the store stopped the work, if it did: a write it refused, or this runner taken over.
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
  const coordinator = coordination.attach({
    stop: stop.signal,
    progress,
    log,
    stopForState,
    followUnheld: () => followInFlight(),
  });
  let output: OpenOutput;
  try {
    await coordinator.takeOverStopped(outDir);
    output = await openOutput(outDir, store.journalScope!, coordination.output);
  } catch (error) {
    coordinator.dispose();
    signals.dispose();
    throw error;
  }

  const wanted = new WantedSet();
  const ctx = await buildContext(options, {
    log,
    progress,
    signals,
    coordinator,
    journal: output.journal,
    wanted,
  });
  const { gate, queues } = ctx;
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
  sayBudgetStop(ctx, options.onBudgetStop);

  const lanes = makeLanes(ctx, stopForState, (error) => {
    if (!gate.fatal) {
      gate.fatal = error;
      log.error({ err: error.message }, "output disk refused a write: stopping");
      options.onStateFailure?.(error);
    }
    stop.abort(error);
  });
  const paths = makeJobPaths(ctx, coordination.output.staleTempMs);
  coordinator.start();

  /**
   * Its own function: each job's work then holds the job and its row id alone, not (through the
   * closure's scope) every row that setManifestJobs read.
   */
  function trackJob(job: Job, id: number, state: JobRow["state"]): void {
    const work = (): ReturnType<typeof paths.processJob> => paths.processJob(job, id);
    if (state === "Success") lanes.track(id, work, queues.checks);
    // Tasks already on the service are admitted first: they hold generation slots too.
    else lanes.track(id, work, queues.admission, state === "submitted" ? IN_FLIGHT : job.seconds);
  }

  async function followInFlight(which: (row: JobRow) => boolean = () => true): Promise<void> {
    for (const row of await store.listInFlight()) {
      if (which(row)) lanes.track(row.id, () => paths.followListed(row), queues.admission, IN_FLIGHT);
    }
    lanes.admit();
  }

  return {
    async setManifestJobs(manifest, jobs) {
      wanted.set(manifest, jobs);
      await paths.prepareDir(manifest);
      for (let from = 0; from < jobs.length; from += RECORD_SLICE) {
        const slice = jobs.slice(from, from + RECORD_SLICE);
        const rows = await store.upsertJobs(slice.map(newJobOf));
        for (let i = 0; i < slice.length; i++) trackJob(slice[i]!, rows[i]!.id, rows[i]!.state);
      }
      lanes.admit();
    },
    prepareDir: paths.prepareDir,
    dropManifest: (manifest) => wanted.drop(manifest),
    followInFlight,
    whenIdle: lanes.whenIdle,
    async wantedRows(given) {
      return wanted.rows(given ?? (await store.jobsByVersion()));
    },
    wantedVersions: () => wanted.versions(),
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
      clearInterval(runTimesSaver);
      if (!stateFailure) await saveRunTimes();
      coordinator.dispose();
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
    // Written out when read: a store reads it for a version it inserts, and a rerun's versions are
    // nearly all recorded already (100,000 stringified specs were a second of its start).
    // A file's stamp (device, inode, times) says which file was checked, for the upload; the record
    // keeps what was sent.
    get specJson() {
      return JSON.stringify(job.spec, (key, value: unknown) => (key === "stamp" ? undefined : value));
    },
    seconds: job.seconds,
    model: job.model,
  };
}
