// What the engine, watch and the CLI need of the state store, in their words: jobs and the intents
// that guard costed calls, assets and speech, and the local caches. The one entry point of the
// store's interface: its parts are in contract/, its errors in src/errors/, both handed on here.
// StateStore (sqlite/store.ts) implements it over one SQLite file, PgStore (pg/store.ts) over a
// PostgreSQL database shared by a fleet; both pass the same conformance suite
// (test/state/conformance.ts), and open-job-store.ts chooses between them.
//
// What a backend must guarantee:
// - Money first. An intent (markSubmitting, markSpeechCreating) is durable before its promise
//   resolves: the caller sends the costed request only then, and a crash or power cut after that
//   must still find the intent. An upload intent (markUploading) need not be: an upload costs no
//   credits.
// - Intents are compare-and-set on their row, not read-then-write: markSubmitting claims a job only
//   from `pending` (or a local failure), markSpeechCreating only where no speech is or it is
//   `uncertain`, markPending only from a final state, markUploading only where no other writer's
//   intent is. Whatever two writers on one store do, one job, speech or upload is claimed once.
// - A failed write undoes itself whole (its events included) and never the writes before it; a
//   failure that lost acknowledged writes (a commit that failed) breaks the store: every later write
//   throws `writeFailure`, and the intents waiting on it reject, so nothing is sent unrecorded.
// - Rows are scoped by service (the canonical base URL: see service-contract/base-url.ts): asset and task ids
//   mean nothing on another service. The local caches are not scoped.
// - Writes are visible to another reader (reel status) soon after they are made (SQLite: at the end
//   of the event loop's turn).
//
// - Every method that reads or writes returns a promise (a network backend answers later); a write
//   that fails rejects it. Callers never rely on a read and the write after it happening with no
//   other task in between: where that would cost money, the write is a compare-and-set (the intents
//   above), or the engine runs the read and the write in one critical section of its own (see
//   engine/assets.ts, keyed-lock.ts).
//
// SQLite-specific, and not part of the contract: the group commit of one turn (turn.ts), hence
// `flush` (a backend with nothing pending makes it a no-op); the hash cache of local files (a
// backend shared by several machines keeps it per machine). StateStore runs each statement when the
// method is called (better-sqlite3 is synchronous) and returns a promise already settled, the
// intents excepted (they resolve once their turn's commit is on disk).
import type { StateFileError } from "../errors/state.js";
import type { AssetRecords, SpeechRecords } from "./contract/assets.js";
import type { BudgetRecords, NamedBudgetRecords, VideoCharge } from "./contract/budgets.js";
import type { EventRecords } from "./contract/events.js";
import type { FleetStore } from "./contract/fleet.js";
import type {
  FailKind,
  JobHead,
  JobRow,
  NewJob,
  RestoredJob,
  VersionHead,
  VersionRef,
  VideoFacts,
} from "./contract/job-row.js";
import type { LearnedRecords, LocalCaches, OutputRecords } from "./contract/kept.js";
import type { ReviewRecords } from "./contract/review.js";

export type * from "./contract/assets.js";
export type * from "./contract/budgets.js";
export type * from "./contract/events.js";
export type * from "./contract/fleet.js";
export type * from "./contract/kept.js";
export * from "./contract/job-row.js";
export * from "./contract/review.js";
export type { NamedBudget, NamedBudgetCaps, NamedBudgetChange, NamedCharge } from "./named-budget.js";
// The errors a store throws (defined in src/errors/, BudgetReachedError beside its budget), named
// here beside the interface that throws them.
export {
  ClaimLostError,
  JobGoneError,
  LeaseLostError,
  StateFileError,
  StoreUnreachableError,
} from "../errors/state.js";
export { BudgetReachedError } from "./named-budget.js";

/** The job versions of one service: what was asked, what was paid, what came back. */
export interface JobRecords {
  /**
   * The rows of these job versions, each created as `pending` if new, in one go: a run of 10,000
   * jobs starts in milliseconds. Returns only what a run starts from, not whole rows (10,000 of
   * those weigh about 15 MB).
   */
  upsertJobs(jobs: readonly NewJob[]): Promise<JobHead[]>;
  /**
   * Rows made from the records in the output folder (`reel run --rebuild-state`, see rebuild.ts): a
   * job version the state does not know is added; one it knows only as unsent or as an intent
   * (`pending`, `submitting`: an older copy of the state) takes what its record shows, and one known
   * as `uncertain` takes a task id its record (the journal) shows. Others are kept as they are.
   * Returns how many rows were written.
   */
  restoreJobs(jobs: readonly RestoredJob[]): Promise<number>;
  /** The state and attempts of this job version, if recorded (the journal's check at start). */
  versionHead(key: string, specHash: string): Promise<VersionHead | undefined>;
  /**
   * Of `jobs`, in their order, those whose version no service's row shows sent (an attempt counted).
   * One query whatever their number; a rerun's jobs are nearly all sent, so only its few come back.
   */
  notSentAnywhere<T extends VersionRef>(jobs: readonly T[]): Promise<T[]>;
  /** Of `jobs`, in their order, those whose version this service has not recorded. One query. */
  notRecorded<T extends VersionRef>(jobs: readonly T[]): Promise<T[]>;
  /**
   * Of `jobs`, the rows recorded for this service, in no particular order. One query whatever their
   * number: the reports read a big run's rows a batch at a time with it, never all at once.
   */
  jobsOfVersions(jobs: readonly VersionRef[]): Promise<JobRow[]>;
  findJob(key: string, specHash: string): Promise<JobRow | undefined>;
  findJobById(id: number): Promise<JobRow | undefined>;
  getJob(id: number): Promise<JobRow>;
  /**
   * Of `jobs`, those this service never sent but another service did (the same job key and spec
   * hash, sent at least once): the same videos asked of another base URL. Another spelling of one
   * service (`localhost` for `127.0.0.1`, a second DNS name) cannot be told from a new service, so
   * the caller asks the user before paying for them again. `ignore`: services whose work costs
   * nothing (the sandbox), never counted.
   */
  listSentElsewhere(
    jobs: readonly { readonly key: string; readonly specHash: string }[],
    ignore: readonly string[],
  ): Promise<{ key: string; baseUrl: string }[]>;
  /** The job versions of this service whose video was downloaded, as versionKey(key, spec hash). */
  downloadedVersions(): Promise<Set<string>>;
  /**
   * For each spec hash that a job of this service was generated with (Success) or is being generated
   * with (sent, not ended: as paid for), the key of one such job: a new job with the same request
   * under another name (a renamed manifest, also one renamed while its videos are made) pays again.
   * With `specHashes`, of those hashes alone: a rerun asks about its few new jobs, not every video made.
   */
  madeSpecs(specHashes?: readonly string[]): Promise<Map<string, string>>;
  /** Every job version of this service, by versionKey(key, spec hash): one query for a whole run. */
  jobsByVersion(): Promise<Map<string, JobRow>>;
  /** Every job version of this service, newest last. */
  listJobs(): Promise<JobRow[]>;
  /** Every job version of this service of `manifest` (every version of each of its videos), newest last. */
  listManifestJobs(manifest: string): Promise<JobRow[]>;
  /**
   * The current version of every job (the one whose video holds `<id>.mp4`, else the newest), of
   * every service, or of this store's service when it has one.
   */
  listLatestJobs(): Promise<(JobRow & { base_url: string })[]>;
  /**
   * Forgets the jobs of `manifest` that nothing was ever sent for (pending, no attempt counted, no
   * task) and that it no longer lists (`keep`: versionKeys): a video removed, or a version edited
   * away, before its submission. They are no record of credits spent, and would show as pending in
   * `status` for good. Returns how many.
   */
  forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): Promise<number>;
  /** Jobs that have a task on the service that has not ended: they must be followed, never resubmitted. */
  listInFlight(): Promise<JobRow[]>;
  /**
   * Versions of a job whose video is recorded at `file`, by any service (a video another service
   * made is moved aside too, never written over), in any output folder: which folder a row's
   * `out_dir` names is the caller's to tell (output/out-folder.ts: one folder has many paths).
   */
  listJobsWithFile(key: string, file: string): Promise<JobRow[]>;

  /**
   * A submission whose intent was written but whose answer was not (the process died in between):
   * it may have reached the service. Called once at start; returns how many.
   */
  markInterruptedSubmissionsUncertain(): Promise<number>;
  /**
   * Write-ahead intent of a costed submission: resolves once it is durable; only then may the
   * request leave. `charge`: a capped run's (src/budget), recorded in the same transaction as the
   * claim, so that a claim is charged once and a claim refused is charged nothing. The
   * compare-and-set: the row is claimed only from a state a submission may start
   * from (`pending`, which --retry-failed and --resubmit-uncertain return a job to first, or a
   * failure before anything was sent). Resolves to the number of the attempt being made (the journal
   * names it). Resolves null, with nothing written, when the row is in another state: another
   * process claimed it, and nothing may be sent. Resolves "full" (a shared store only), with nothing
   * written, when the account's bound of unfinished generations is reached across the fleet: try
   * again when a slot frees. Throws JobGoneError when the row is gone, and LeaseLostError when this
   * runner of a shared store was taken over.
   */
  markSubmitting(id: number, charge?: VideoCharge): Promise<number | null | "full">;
  /**
   * An intent whose request was not sent after all (the run stopped, or the job was withdrawn, while
   * the intent was being committed): the job is pending again and the attempt is given back.
   */
  withdrawSubmitting(id: number): Promise<void>;
  /**
   * The answer to a submission. Need not be durable: if a power cut loses it, the job is found in
   * `submitting` and becomes uncertain, never resubmitted; only the intent must be durable.
   * Resolves undefined once recorded; or, with nothing written, the key of another job of this
   * service that holds this task id already (a fault of the service: two jobs following one task
   * would deliver one video twice, and the other task, perhaps paid, never). Checked and written
   * as one step, so of two answers naming one task, one is recorded.
   */
  markSubmitted(id: number, taskId: string): Promise<string | undefined>;
  /** Its submission may have reached the service (the mark of a speech doubt, if any, cleared). */
  markUncertain(id: number, error: string): Promise<void>;
  /**
   * A job not sent because its speech is in doubt (see FailKind `speech`). Only from a state no
   * submission was claimed in (pending, a local failure): a job another process claimed meanwhile,
   * or already uncertain, is left as it is.
   */
  markSpeechDoubt(id: number, error: string): Promise<void>;
  markFailed(id: number, kind: FailKind, error: string): Promise<void>;
  /**
   * The service refused a submission for certain (401, 402, 429, 503, connection refused): nothing
   * was created, so the attempt counted by markSubmitting is given back.
   */
  markRefused(id: number, error: string): Promise<void>;
  /**
   * Back to `pending` for a new attempt (retry of a failure or of an uncertain submission). Only from
   * those final states: false, with nothing written, when the row has moved on meanwhile (another
   * process retried it already: pending again, it would be paid for twice).
   */
  markPending(id: number, why: string): Promise<boolean>;
  /** A status seen by polling. Final statuses move the job to that state. */
  recordTaskStatus(
    id: number,
    status: string,
    resultUrl: string | undefined,
    reason: string | undefined,
  ): Promise<void>;
  /** A fresh result URL (the old one expired). */
  recordResultUrl(id: number, url: string): Promise<void>;
  /**
   * Records the video of `row` at `file` in the output folder `outDir`; returns the row as now
   * recorded. `video`: what was written (a fresh download); a video moved keeps what it had.
   */
  markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): Promise<JobRow>;
  /** The file of a Success was lost (deleted by the user): download it again from its task. */
  forgetDownload(row: JobRow): Promise<JobRow>;
  recordJobError(id: number, error: string): Promise<void>;
  /** The job's video was found whole: an error left by an earlier failure (a full disk) no longer holds. */
  clearJobError(row: JobRow): Promise<JobRow>;
  /** The job's video was read again and holds what reel wrote: its new stamp spares the next read. */
  recordVideoStamp(row: JobRow, stamp: string): Promise<JobRow>;
}

/**
 * The records of the store: all of it but its own life (events, flush, close) and the fleet. Each
 * backend assembles them from its parts (see assembled.ts).
 */
export type StoreRecords = JobRecords &
  AssetRecords &
  SpeechRecords &
  BudgetRecords &
  NamedBudgetRecords &
  LearnedRecords &
  OutputRecords &
  LocalCaches &
  ReviewRecords;

/** The whole store, as a run uses it. */
export interface JobStore extends EventRecords, StoreRecords {
  /** The fleet's operations, on a store shared by several runners (PostgreSQL); undefined on a state file. */
  readonly fleet?: FleetStore;
  /** Where the store is, for messages (the state file's path). */
  readonly path: string;
  /**
   * How the journal of costed calls in an output folder names this store's lines (output/journal.ts):
   * the state file's real path and the service's canonical base URL. Undefined when read-only.
   */
  readonly journalScope: { readonly state: string; readonly service: string } | undefined;
  /** Why the store can no longer be written, once a commit failed. */
  readonly writeFailure: StateFileError | undefined;
  /** Makes durable now what was written (before closing, and before the process exits). */
  flush(): Promise<void>;
  /** Flushes and closes. Throws `writeFailure`, if any, once the store is released. */
  close(): Promise<void>;
}

/**
 * What deciding and retaking use of a store (`reel approve`, `reject`, `undecide`, `retake`, the
 * review page): the jobs to read, and the review records to write. Opened by openReviewStore beside
 * a run or watch that holds the store (no lock taken, no runner registered), so nothing here can
 * claim a costed call: the methods that could are left out of the type.
 */
export type ReviewStore = Pick<
  JobStore,
  "path" | "listLatestJobs" | "listJobs" | "listManifestJobs" | "findJob" | "close"
> &
  ReviewRecords;
