// `reel run`'s driver: one engine, every job of the run's manifests to a final state, then the
// reports (results.jsonl and index.html). `reel watch` is the other driver (src/watch).
import { DEFAULTS } from "../defaults.js";
import { type Engine, type EngineOptions, makeEngine, newJobOf } from "../engine/engine.js";
import { silentProgress } from "../engine/progress.js";
import { OutputDiskError } from "../errors.js";
import type { Job } from "../manifest/index.js";
import { asDiskFailure } from "../output/atomic-write.js";
import { type ReportRun, writeHtmlReport } from "../report/html-report.js";
import { folderRows, type FolderRows } from "../report/folder-rows.js";
import { writeResults } from "../report/results.js";
import { writeDecisionRecords } from "../review/decision-records.js";
import {
  type DecisionRow,
  decisionsByVersion,
  type JobRow,
  LeaseLostError,
  StoreUnreachableError,
  versionKey,
} from "../state/job-store.js";
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
export async function runBatch(options: RunBatchOptions): Promise<RunSummary> {
  const startedAt = new Date();
  const progress = options.progress ?? silentProgress;
  const engine = await makeEngine(options);
  const byManifest = new Map<string, Job[]>();
  for (const job of options.jobs) {
    const list = byManifest.get(job.manifest) ?? [];
    list.push(job);
    byManifest.set(job.manifest, list);
  }
  const selected = new Set(options.jobs);
  const leftOut = (options.listedJobs ?? []).filter((job) => !selected.has(job));
  try {
    // Every output folder is checked before any job starts: one that cannot be made or written
    // stops the run before anything is sent.
    for (const manifest of byManifest.keys()) await engine.prepareDir(manifest);
    await startProgress(progress, options.store, options.jobs);
    if (leftOut.length > 0) await options.store.upsertJobs(leftOut.map(newJobOf));
    for (const [manifest, jobs] of byManifest) await engine.setManifestJobs(manifest, jobs);
    // Every task already paid for is followed to the end and its video fetched, whatever asks for
    // it now: a version edited away (its video keeps its hash name), a removed video, a manifest
    // deleted or left out of this run (into its own folder). With --only, only the selected.
    const selectedKeys = new Set(options.jobs.map((job) => job.key));
    await engine.followInFlight((row) => leftOut.length === 0 || selectedKeys.has(row.job_key));
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
  const listed = options.listedJobs ?? options.jobs;
  const keep = new Set(listed.map((job) => versionKey(job.key, job.specHash)));
  for (const manifest of new Set(listed.map((job) => job.manifest))) {
    await options.store.forgetUnsentJobs(manifest, keep);
  }
  await options.store.flush(); // the last turn's writes: a failure to commit them must be reported too
  if (options.store.writeFailure) throw options.store.writeFailure;
  const versions = await options.store.jobsByVersion(); // one read of every row, for both lists
  const finalRows = await engine.wantedRows(versions);
  const listedRows =
    leftOut.length === 0
      ? finalRows
      : options.listedJobs!.flatMap((job) => versions.get(versionKey(job.key, job.specHash)) ?? []);
  const unfinished = finalRows.some((row) => !FINAL_JOB_STATES.has(row.state));
  const capped = options.budget?.stopped !== undefined;
  const outcome = engine.fatal
    ? "fatal"
    : engine.stopped
      ? "interrupted"
      : capped
        ? "capped"
        : unfinished
          ? "incomplete"
          : "completed";
  const fatal = engine.fatal;
  const decisions = decisionsByVersion(await options.store.latestDecisions());
  const maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
  // The reports list the folder's other manifests too: what this run worked on is marked.
  const folder = await folderRows(
    options.store,
    options.outDir,
    listedRows,
    finalRows,
    listed.map((job) => job.manifest),
  );
  await writeReports(engine, options.outDir, folder, decisions, {
    outcome,
    maxAttempts,
    ...(fatal ? { fatal: { code: fatal.code, message: fatal.message } } : {}),
    ...(options.service !== undefined ? { service: options.service } : {}),
    startedAt,
  });
  return {
    outcome,
    rows: finalRows,
    decisions,
    maxAttempts,
    ...(engine.fatal ? { fatal: engine.fatal } : {}),
    ...(options.budget
      ? {
          budget: { budget: options.budget, left: await options.budget.leftUnsent(finalRows, options.store) },
        }
      : {}),
  };
}
/**
 * results.jsonl and index.html of the folder's jobs, and the decisions in their records; `run`: how
 * it ended, for the page's banner.
 */
async function writeReports(
  engine: Engine,
  outDir: string,
  listed: FolderRows,
  decisions: ReadonlyMap<string, DecisionRow>,
  run: ReportRun,
): Promise<void> {
  try {
    await writeResults(outDir, listed.rows, listed.thisRun, decisions);
    await writeHtmlReport(outDir, listed.rows, { run, thisRun: listed.thisRun, decisions });
    writeDecisionRecords(outDir, listed.rows, decisions);
  } catch (error) {
    // The disk that stopped the run refuses these too: the rerun writes them.
    if (!(engine.fatal instanceof OutputDiskError && asDiskFailure(error, outDir))) throw error;
  }
}
