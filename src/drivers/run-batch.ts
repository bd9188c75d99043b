// `reel run`'s driver: one engine, every job of the run's manifests to a final state, then the
// reports (results.jsonl and index.html). `reel watch` is the other driver (src/watch).
import { DEFAULTS } from "../defaults.js";
import { type Engine, type EngineOptions, makeEngine, newJobOf } from "../engine/engine.js";
import { silentProgress } from "../engine/progress.js";
import { OutputDiskError } from "../errors/output.js";
import type { Job } from "../manifest/index.js";
import { asDiskFailure } from "../output/atomic-write.js";
import type { ReportRun } from "../report/report-options.js";
import { writeFolderReports } from "../report/folder-reports.js";
import { storedFolderRows } from "../report/folder-rows.js";
import { onFirstPass, type ReportRows, storedRows } from "../report/report-rows.js";
import { statusOf } from "../output/job-record.js";
import { writeDecisionRecords } from "../review/decision-records.js";
import {
  type DecisionRow,
  decisionsByVersion,
  type JobRow,
  versionKey,
  type VersionRef,
} from "../state/job-store.js";
import { LeaseLostError, StoreUnreachableError } from "../errors/state.js";
import { startProgress } from "./notes.js";
import type { RunSummary } from "./run-summary.js";

export interface RunBatchOptions extends EngineOptions {
  readonly jobs: readonly Job[];
  /**
   * Every job of the run's manifests, when `jobs` is a selection of them (--only): those left out
   * are not worked on, but recorded (pending if new) and listed in results.jsonl and index.html
   * with their current state, which lists every job of the manifests of the run. @defaultValue jobs
   */
  readonly listedJobs?: readonly Job[];
  /** The service as index.html names it: "sandbox" or the base URL. @defaultValue not named */
  readonly service?: string;
}

/** Where a job's run ends: nothing more happens to it unless the user asks. */
const FINAL_JOB_STATES: ReadonlySet<JobRow["state"]> = new Set(["Success", "Fail", "Canceled", "uncertain"]);

/** A one-shot run: every job to a final state, then results.jsonl and index.html. */
export function runBatch(options: RunBatchOptions): Promise<RunSummary> {
  // Not async: the job lists are held by startBatch alone, and let go once the engine has the jobs and
  // the store has recorded them (each queued job holds its own; held for the run, 100,000 jobs were
  // some 50 MB). The run's end reads the versions back from the engine.
  return startBatch(options).then(finishBatch);
}

/** What the run's end needs of its start: no job list. */
interface Started {
  readonly options: Omit<RunBatchOptions, "jobs" | "listedJobs">;
  readonly engine: Engine;
  readonly startedAt: Date;
  /** The manifests of the listed jobs. */
  readonly manifests: readonly string[];
  /** With --only: the version of every listed job, in their order; otherwise the engine's are. */
  readonly listedVersions: readonly VersionRef[] | undefined;
}

/** Hands every job to the engine and starts the work. */
async function startBatch(given: RunBatchOptions): Promise<Started> {
  const startedAt = new Date();
  const { jobs, listedJobs, ...options } = given;
  const progress = options.progress ?? silentProgress;
  const engine = await makeEngine(options);
  const byManifest = new Map<string, Job[]>();
  for (const job of jobs) {
    const list = byManifest.get(job.manifest) ?? [];
    list.push(job);
    byManifest.set(job.manifest, list);
  }
  const leftOut = leftOutOf(jobs, listedJobs);
  const listed = listedJobs ?? jobs;
  try {
    // Every output folder is checked before any job starts: one that cannot be made or written
    // stops the run before anything is sent.
    for (const manifest of byManifest.keys()) await engine.prepareDir(manifest);
    await startProgress(progress, options.store, jobs);
    if (leftOut.length > 0) await options.store.upsertJobs(leftOut.map(newJobOf));
    for (const [manifest, own] of byManifest) await engine.setManifestJobs(manifest, own);
    // Every task already paid for is followed to the end and its video fetched, whatever asks for
    // it now: a version edited away (its video keeps its hash name), a removed video, a manifest
    // deleted or left out of this run (into its own folder). With --only, only the selected.
    await engine.followInFlight(leftOut.length === 0 ? undefined : keyIn(jobs));
  } catch (error) {
    await engine.dispose();
    throw error;
  }
  return {
    options,
    engine,
    startedAt,
    manifests: [...new Set(listed.map((job) => job.manifest))],
    listedVersions:
      leftOut.length === 0 ? undefined : listed.map((job) => ({ key: job.key, specHash: job.specHash })),
  };
}

/** Waits for the work, then the reports and the summary. */
async function finishBatch(started: Started): Promise<RunSummary> {
  const { options, engine, startedAt, listedVersions } = started;
  const progress = options.progress ?? silentProgress;
  try {
    await engine.whenIdle();
  } finally {
    await engine.dispose();
  }
  progress.stop();
  // The store stopped the work (a runner of a fleet taken over, or the store unreachable): its own
  // view of the jobs is not the fleet's, so no report is written from it; the error says what
  // happened and how to go on.
  const failure = engine.stateFailure;
  if (failure instanceof LeaseLostError || failure instanceof StoreUnreachableError) throw failure;
  // Jobs these manifests no longer list that nothing was sent for (a removed video, an edit made
  // before the submission): forgotten, or status would show them pending for good. Only once the
  // engine is idle: no job of theirs is under way.
  const keep = new Set<string>();
  for (const v of listedVersions ?? engine.wantedVersions()) keep.add(versionKey(v.key, v.specHash));
  for (const manifest of started.manifests) await options.store.forgetUnsentJobs(manifest, keep);
  keep.clear();
  await options.store.flush(); // the last turn's writes: a failure to commit them must be reported too
  if (options.store.writeFailure) throw options.store.writeFailure;
  // The rows are read from the store a batch at a time, never all held at once (at 100,000 jobs they
  // were most of the run's memory), and once: the summary's tally rides on the reports' pass when they
  // list the run's rows alone; with --only it reads the selection first.
  const workedRows = storedRows(options.store, () => engine.wantedVersions());
  let end = new RunEnd();
  const listedRows =
    listedVersions === undefined
      ? onFirstPass(workedRows, (row) => end.add(row), end.finish)
      : storedRows(options.store, () => listedVersions);
  if (listedVersions !== undefined) end = await tallyRows(workedRows);
  const decisions = decisionsByVersion(await options.store.latestDecisions());
  const capped = options.budget?.stopped !== undefined;
  const outcomeOf = (): RunSummary["outcome"] =>
    engine.fatal
      ? "fatal"
      : engine.stopped
        ? "interrupted"
        : capped
          ? "capped"
          : end.unfinished
            ? "incomplete"
            : "completed";
  const fatal = engine.fatal;
  const maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
  // The reports list the folder's other manifests too: what this run worked on is marked.
  const folder = await storedFolderRows(
    options.store,
    options.outDir,
    listedRows,
    end.thisRun,
    started.manifests,
  );
  await writeReports(engine, options.outDir, folder, decisions, () => ({
    outcome: outcomeOf(),
    maxAttempts,
    ...(fatal ? { fatal: { code: fatal.code, message: fatal.message } } : {}),
    ...(options.service !== undefined ? { service: options.service } : {}),
    startedAt,
  }));
  // The reports stopped short (the disk that stopped the run): the summary reads the rows itself.
  if (!end.complete) end = await tallyRows(workedRows);
  const outcome = outcomeOf();
  return {
    outcome,
    counts: end.counts,
    videos: end.videos,
    notDone: end.notDone,
    rows: workedRows,
    decisions,
    maxAttempts,
    ...(engine.fatal ? { fatal: engine.fatal } : {}),
    ...(options.budget
      ? {
          budget: {
            budget: options.budget,
            left: await options.budget.leftUnsent(end.notDone, options.store),
          },
        }
      : {}),
  };
}

/**
 * The listed jobs not selected (--only). Sets made here, not in runBatch: what its closures see lives
 * as long as the run, and a set of 100,000 jobs is megabytes.
 */
function leftOutOf(jobs: readonly Job[], listed: readonly Job[] | undefined): Job[] {
  // `jobs` is a selection of `listedJobs`: as many means all of them.
  if (!listed || listed.length === jobs.length) return [];
  const selected = new Set(jobs);
  return listed.filter((job) => !selected.has(job));
}

/** Whether a row is of one of `jobs`. */
function keyIn(jobs: readonly Job[]): (row: JobRow) => boolean {
  const keys = new Set(jobs.map((job) => job.key));
  return (row) => keys.has(row.job_key);
}

/** What one pass over the run's rows finds: all the summary holds of them, and the ids the reports mark. */
class RunEnd {
  readonly counts: Record<string, number> = {};
  readonly videos = new Map<string, number>();
  readonly notDone: JobRow[] = [];
  unfinished = false;
  readonly thisRun = new Set<number>();
  /** Whether every row was added. */
  complete = false;

  add(row: JobRow): void {
    this.thisRun.add(row.id);
    const status = statusOf(row);
    this.counts[status] = (this.counts[status] ?? 0) + 1;
    if (row.file !== null) this.videos.set(row.manifest, (this.videos.get(row.manifest) ?? 0) + 1);
    if (!(row.state === "Success" && row.file !== null)) this.notDone.push(row);
    if (!FINAL_JOB_STATES.has(row.state)) this.unfinished = true;
  }

  readonly finish = (): void => {
    this.complete = true;
  };
}

/** The run's end, from a pass of its own over the run's rows. */
async function tallyRows(rows: ReportRows): Promise<RunEnd> {
  const end = new RunEnd();
  for await (const row of rows) end.add(row);
  end.finish();
  return end;
}

/**
 * results.jsonl and index.html of the folder's jobs, and the decisions in their records; `run`: how
 * it ended, for the page's banner.
 */
async function writeReports(
  engine: Engine,
  outDir: string,
  listed: { readonly rows: ReportRows; readonly thisRun: ReadonlySet<number> },
  decisions: ReadonlyMap<string, DecisionRow>,
  run: () => ReportRun,
): Promise<void> {
  try {
    // Only the rows of decided versions have a record to bring in line: those alone are held.
    const decided: JobRow[] = [];
    await writeFolderReports(outDir, listed.rows, {
      thisRun: listed.thisRun,
      decisions,
      run,
      each: (row) => {
        if (decisions.size > 0 && decisions.has(versionKey(row.job_key, row.spec_hash))) decided.push(row);
      },
    });
    writeDecisionRecords(outDir, decided, decisions);
  } catch (error) {
    // The disk that stopped the run refuses these too: the rerun writes them.
    if (!(engine.fatal instanceof OutputDiskError && asDiskFailure(error, outDir))) throw error;
  }
}
