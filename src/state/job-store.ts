// What the engine, watch and the CLI need of the state store, in their words: jobs and the intents
// that guard costed calls, assets and speech, and the local caches. StateStore (store.ts) implements
// it over one SQLite file; a second backend (PostgreSQL) implements the same, and must pass
// the same conformance suite (test/state/conformance.ts).
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
//   engine/assets.ts, engine/keyed-lock.ts).
//
// SQLite-specific, and not part of the contract: the group commit of one turn (turn.ts), hence
// `flush` (a backend with nothing pending makes it a no-op); the hash cache of local files (a
// backend shared by several machines keeps it per machine). StateStore runs each statement when the
// method is called (better-sqlite3 is synchronous) and returns a promise already settled, the
// intents excepted (they resolve once their turn's commit is on disk).
import type { LeaseLostError, StateFileError } from "./errors.js";
import type { StoredEvent } from "./stored-event.js";
import type { NamedBudget, NamedBudgetCaps, NamedBudgetChange, NamedCharge } from "./named-budget.js";

export type { NamedBudget, NamedBudgetCaps, NamedBudgetChange, NamedCharge };

export type JobState = "pending" | "submitting" | "submitted" | "Success" | "Fail" | "Canceled" | "uncertain";
/**
 * Why a job failed (`Fail`, `Canceled`): before anything was sent (`local`), its submission refused
 * (`rejected`), or its task ended so (`task`). On an `uncertain` job, `speech`: the doubt is its
 * speech's alone (a call perhaps paid for, with no answer recorded) and its own submission was never
 * claimed, so once that speech is known it may go back to pending (engine/speech-doubt.ts).
 */
export type FailKind = "local" | "rejected" | "task" | "speech";

/** A job version as recorded (the column names of the SQLite table, which callers read). */
export interface JobRow {
  readonly id: number;
  readonly job_key: string;
  readonly manifest: string;
  readonly video_id: string;
  readonly spec_hash: string;
  readonly spec_json: string;
  readonly seconds: number;
  readonly model: string;
  readonly state: JobState;
  readonly fail_kind: FailKind | null;
  readonly attempts: number;
  readonly task_id: string | null;
  readonly task_status: string | null;
  readonly result_url: string | null;
  readonly file: string | null;
  /** The output folder `file` lies in (absolute), or null when recorded by an earlier reel. */
  readonly out_dir: string | null;
  readonly error: string | null;
  readonly created_at: number;
  readonly submitted_at: number | null;
  readonly running_at: number | null;
  readonly finished_at: number | null;
  readonly downloaded_at: number | null;
  readonly updated_at: number;
  /** Size and SHA-256 of the video when reel wrote it, and its stamp then (see migration 6). */
  readonly file_size: number | null;
  readonly file_sha256: string | null;
  readonly file_stamp: string | null;
}

/** The little of a job row that a run starts from. */
export type JobHead = Pick<JobRow, "id" | "state" | "file">;

/** What the journal's check needs of a job version's row (see versionHead). */
export interface VersionHead {
  readonly id: number;
  readonly state: JobState;
  readonly attempts: number;
  readonly file: string | null;
}

/** What reel knows of a video it wrote: its content, and the stamp (see migration 6) it had then. */
export interface VideoFacts {
  readonly size: number;
  readonly sha256: string;
  readonly stamp: string;
}

export interface NewJob {
  readonly key: string;
  readonly manifest: string;
  readonly videoId: string;
  readonly specHash: string;
  readonly specJson: string;
  readonly seconds: number;
  readonly model: string;
}

/** A job row made from a record in the output folder (src/output/recovery.ts): what restoreJobs writes. */
export interface RestoredJob extends NewJob {
  readonly state: JobState;
  readonly failKind: FailKind | null;
  readonly attempts: number;
  readonly taskId: string | null;
  readonly taskStatus: string | null;
  readonly file: string | null;
  readonly outDir: string | null;
  /** What the video held when reel wrote it, as its record says: checked at the next look at it. */
  readonly fileSize: number | null;
  readonly fileSha256: string | null;
  readonly error: string | null;
  readonly createdAt: number;
  readonly submittedAt: number | null;
  readonly finishedAt: number | null;
  readonly downloadedAt: number | null;
}

/** What tells a file's content apart without reading it (see migration 5). */
export interface FileStamp {
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  readonly ino: string;
}

export interface SpeechRow {
  readonly state: "creating" | "done" | "uncertain";
  readonly asset_id: string | null;
  readonly duration: number | null;
  readonly error: string | null;
}

/** A job version named: its job key and spec hash. */
export interface VersionRef {
  readonly key: string;
  readonly specHash: string;
}

/** A job version's identity in one string (job keys never contain a newline). */
export function versionKey(jobKey: string, specHash: string): string {
  return `${jobKey}\n${specHash}`;
}

/** The job versions of one service: what was asked, what was paid, what came back. */
export interface JobRecords {
  /** The row of this job version, created as `pending` if new. */
  upsertJob(job: NewJob): Promise<JobRow>;
  /**
   * `upsertJob` for many jobs at once: a run of 10,000 jobs starts in milliseconds. Returns only
   * what a run starts from, not whole rows (10,000 of those weigh about 15 MB).
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
   * Of `jobs`, the versions any service's row shows sent (an attempt counted), as versionKey(key,
   * spec hash). One query whatever their number.
   */
  sentAnywhere(jobs: readonly VersionRef[]): Promise<Set<string>>;
  /** Of `jobs`, the versions recorded for this service, as versionKey. One query whatever their number. */
  knownVersions(jobs: readonly VersionRef[]): Promise<Set<string>>;
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
   */
  madeSpecs(): Promise<Map<string, string>>;
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

/** Uploaded assets and their intents, scoped by service. */
export interface AssetRecords {
  findAsset(sha256: string): Promise<string | undefined>;
  /**
   * The intent of an upload. One intent wins: an intent this store did not write (intents of a dead
   * run are taken at start, see takeInterruptedUploads) is another process's upload of the same
   * content, under way, and this one throws ClaimLostError instead of uploading a second copy.
   */
  markUploading(sha256: string): Promise<void>;
  /** An upload the service refused for certain: nothing to report at the next start. */
  forgetUploadIntent(sha256: string): Promise<void>;
  /**
   * Uploads whose intent was written but whose asset id was not: a run died during them. They will
   * be uploaded again (an extra copy on the service, no credits). Returns how many, and forgets them.
   */
  takeInterruptedUploads(): Promise<number>;
  recordAsset(sha256: string, assetId: string, size: number): Promise<void>;
  /** Whether reel uploaded this asset, or made it as speech, on this service. */
  madeAsset(assetId: string): Promise<boolean>;
  /** The service lost this asset (deleted): the next use uploads it again. */
  forgetAssetId(assetId: string): Promise<void>;
}

/** Speech made by the service (a costed call), scoped by service. */
export interface SpeechRecords {
  findSpeech(voiceId: string, text: string): Promise<SpeechRow | undefined>;
  /**
   * Write-ahead intent of a costed speech call: resolves once it is durable. A compare-and-set: made
   * only where no speech row is, or over an `uncertain` one (--resubmit-uncertain). A row `creating`
   * or `done` was written by another process since the caller looked: it throws ClaimLostError, and
   * the speech is not paid for twice. `charge`: as markSubmitting's, recorded with the intent.
   */
  markSpeechCreating(voiceId: string, text: string, charge?: SpeechCharge): Promise<void>;
  markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): Promise<void>;
  markSpeechUncertain(voiceId: string, text: string, error: string): Promise<void>;
  /** A speech call that failed for certain (refused): nothing was made, forget the intent. */
  clearSpeech(voiceId: string, text: string): Promise<void>;
  /** Speech intents without an answer from a run that died: they may have been made. */
  markInterruptedSpeechUncertain(): Promise<number>;
}

/** What a submission costs a capped run (src/budget): what was sent, and what it cost then. */
export interface VideoCharge {
  /** The budget session (BudgetRecords). */
  readonly session: number;
  readonly model: string;
  readonly resolution: string | null;
  readonly seconds: number;
  /** Its credits at the prices of the moment it is sent; null when no price is known. */
  readonly credits: number | null;
  /** What it spends of a named budget (NamedBudgetRecords), checked and spent with the claim. */
  readonly named?: NamedCharge;
}

/** A speech call of a capped run. */
export interface SpeechCharge {
  readonly session: number;
  /** Its credits at the prices of the moment it is made; null when no price is known. */
  readonly credits: number | null;
  /** What it spends of a named budget, checked and spent with the intent. */
  readonly named?: NamedCharge;
}

/**
 * Named budgets: not scoped by service (the money is the team's), written beside the runners that
 * spend from them (no lock, no runner). A charge (NamedCharge) is spent by the intent it goes with:
 * markSubmitting and markSpeechCreating check it against the budget's caps as they are at that moment
 * and record it in the same transaction, or throw BudgetReachedError having written nothing, so no
 * interleaving of runners passes a cap and a kill -9 loses no spend. A charge met again (the same
 * job's attempt) is spent once. refundVideo and refundSpeech give a named charge back too.
 */
export interface NamedBudgetRecords {
  /** Creates budget `name`, or changes its caps (what was spent stays spent). */
  setBudget(name: string, change: NamedBudgetChange): Promise<NamedBudget>;
  findBudget(name: string): Promise<NamedBudget | undefined>;
  /** Every budget, by name. */
  listBudgets(): Promise<NamedBudget[]>;
}

/**
 * The process that starts or resumes a budget session, as recorded for people to read. Whether it
 * still runs is never judged by these (see OpenBudgetSession.runs).
 */
export interface BudgetOwner {
  readonly host: string;
  readonly pid: number;
}

/** A budget session as recorded: one capped run or watch, and the runs that resume it. */
export interface BudgetSessionRow extends BudgetOwner {
  readonly id: number;
  readonly scope: string;
  readonly startedAt: number;
  /** On a shared store, the runner that runs it (null on a state file, or not known). */
  readonly runner: number | null;
}

/**
 * An open session, and whether the run that has it still runs, as the store can tell: `here`, this
 * store's own; `gone`, surely stopped (on a state file, every other one: its lock lets one process
 * write it; on a shared store, its runner stopped or was found lost); on a shared store, a runner
 * not stopped, last heard at `heardAt` (the store's clock): at work, or killed within its lease.
 */
export interface OpenBudgetSession extends BudgetSessionRow {
  readonly runs: "here" | "gone" | { readonly heardAt: number };
}

/**
 * What a budget session sent that may cost: videos by model, resolution and whether a price was
 * recorded with them, and speech calls. `credits`: what those charges cost when they were sent;
 * null for charges sent with no price known (priced when read).
 */
export interface SpendTally {
  readonly videos: readonly {
    readonly model: string;
    readonly resolution: string | null;
    readonly seconds: number;
    readonly count: number;
    readonly credits: number | null;
  }[];
  readonly speech: { readonly count: number; readonly credits: number | null }[];
}

/**
 * The ledger of capped runs (src/budget), scoped by service. Charges are written with their intents
 * (markSubmitting, markSpeechCreating); a refund is a write of its own after the intent is given
 * back, so a crash between them counts a request never sent (the safe side: the cap is never passed).
 */
export interface BudgetRecords {
  /** The sessions of `scope` not ended, oldest first, with whether their run still runs. */
  openBudgetSessions(scope: string): Promise<OpenBudgetSession[]>;
  /** A session of this store's own (its runner's, on a shared store). */
  startBudgetSession(scope: string, owner: BudgetOwner): Promise<BudgetSessionRow>;
  /**
   * Makes session `session` this store's own if it is still as read (the same runner, or the same
   * process): a compare-and-set, so of two processes resuming one session, one does. False when
   * another took it first.
   */
  takeBudgetSession(session: BudgetSessionRow, owner: BudgetOwner): Promise<boolean>;
  budgetSpent(id: number): Promise<SpendTally>;
  /** The charge of job `jobId`'s attempt `attempt`, whose request was not sent after all. */
  refundVideo(session: number, jobId: number, attempt: number): Promise<void>;
  /** The last charge of this speech, whose call was refused for certain. */
  refundSpeech(session: number, voiceId: string, text: string): Promise<void>;
  /** The session's run finished: the next run starts a session of its own. */
  endBudgetSession(id: number): Promise<void>;
}

/** A reviewer's verdict on a take: `reel approve`, `reel reject` (or the review page). */
export type Verdict = "approved" | "rejected";
/** What a decision records: a verdict, or an earlier one cleared (`reel undecide`). */
export type DecisionAction = Verdict | "cleared";

/** A decision to record on a job version (its key and spec hash: an edited spec is another job). */
export interface NewDecision {
  readonly key: string;
  readonly specHash: string;
  readonly decision: DecisionAction;
  readonly reviewer: string;
  readonly note?: string | null;
}

/** A decision as recorded. */
export interface DecisionRow {
  /** Its order in the store: of one job version's decisions, the highest is the latest. */
  readonly id: number;
  /** The service of the job version, as the store names it (the `base_url` of listLatestJobs). */
  readonly baseUrl: string;
  readonly key: string;
  readonly specHash: string;
  readonly decision: DecisionAction;
  readonly reviewer: string;
  readonly note: string | null;
  /** Epoch milliseconds, by the clock of the process that recorded it. */
  readonly decidedAt: number;
}

/** Latest decisions of one service's job versions by versionKey(key, spec hash). */
export function decisionsByVersion(rows: readonly DecisionRow[]): Map<string, DecisionRow> {
  return new Map(rows.map((row) => [versionKey(row.key, row.specHash), row]));
}

/**
 * Reviewers' decisions, scoped by service and kept per job version (key and spec hash, not row id:
 * a version forgotten and made again, or rebuilt from the records, keeps its decisions). Every
 * decision is kept; the latest of a version counts. A store opened to review (openReviewStore)
 * writes them beside a run or watch that holds the store: see docs/review.md.
 */
export interface ReviewRecords {
  /**
   * Records `decisions`, all or none (one transaction), in their order; returns them as recorded.
   * Nothing checks that the job versions exist: the caller has read them.
   */
  recordDecisions(decisions: readonly NewDecision[]): Promise<DecisionRow[]>;
  /**
   * The latest decision of every decided job version of this service (of every service, for a
   * reader opened without one), in one query; of `versions` only, when given. A version whose
   * latest decision is `cleared` is listed with it: undecided again, and the history says by whom.
   */
  latestDecisions(
    versions?: readonly { readonly key: string; readonly specHash: string }[],
  ): Promise<DecisionRow[]>;
  /** Every decision on this job version of this service, oldest first. */
  decisionHistory(key: string, specHash: string): Promise<DecisionRow[]>;

  /**
   * Queues a retake of the take `request.from`, in one transaction that no other retake of the same
   * video runs beside (so two reviewers retaking at once make two takes, numbered apart): reads
   * every take of its video (`request.plan` is given them and returns the new take's job), records
   * the retaken take as rejected (reviewer, note), adds the new take as an unsent job, and the retake
   * that asks for it. The next run or watch of its manifest sends it (src/review/retake.ts says how
   * it finds it): the job is claimed as any job is, so it is paid once. `plan` may throw: nothing is
   * recorded then.
   */
  queueRetake(request: RetakeRequest): Promise<RetakeRow>;
  /**
   * Withdraws the retake that asked for the take `key`, if it is queued still: a compare-and-set with
   * the run's claim (markSubmitting), so of the two, one wins. "withdrawn": its unsent job is
   * forgotten (a run that had it claims nothing: JobGoneError); "sent": too late, it was claimed;
   * "none": no retake of that take is queued.
   */
  withdrawRetake(key: string): Promise<"withdrawn" | "sent" | "none">;
  /**
   * The retakes of this service (of every service, for a reader opened without one; of `manifests`
   * only, when given), in the order queued, each with its state.
   */
  listRetakes(manifests?: readonly string[]): Promise<RetakeRow[]>;
  /**
   * A mark of the jobs, decisions and retakes of this service (of every service, for a reader opened
   * without one) that differs once any of them changed: a few aggregates, no rows, so a live review
   * page checks it each second and reads the takes only when it moved. Marks are only compared.
   */
  changeMark(): Promise<string>;
}

/**
 * Every take of one video (`intro`, `intro~1`, `intro~2`... of one manifest) on the store's service:
 * what a retake is numbered and seeded after.
 */
export interface VideoTakes {
  /** Every version of every take, oldest first. */
  readonly jobs: readonly JobRow[];
  /** Every retake of the video ever queued, withdrawn ones too (their numbers are not given again). */
  readonly retakes: readonly RetakeRow[];
}

export interface RetakeRequest {
  /** The take retaken: its current version. */
  readonly from: { readonly key: string; readonly specHash: string };
  readonly reviewer: string;
  readonly note?: string | null;
  /** The new take's job, from the video's takes (see src/review/retake.ts). */
  readonly plan: (video: VideoTakes) => NewJob;
}

/**
 * queued: its job not claimed yet (withdrawable); sent: claimed (it may be in flight, done or
 * failed: its job says); withdrawn; dropped: its unsent job was forgotten (the video was edited or
 * removed from its manifest before the retake was sent).
 */
export type RetakeState = "queued" | "sent" | "withdrawn" | "dropped";

export interface RetakeRow {
  readonly id: number;
  readonly baseUrl: string;
  /** The new take: its job's key (`manifest/id~n`), manifest, id and spec hash. */
  readonly key: string;
  readonly manifest: string;
  readonly videoId: string;
  readonly specHash: string;
  /** The take retaken: its key and version. */
  readonly fromKey: string;
  readonly fromSpecHash: string;
  readonly reviewer: string;
  readonly note: string | null;
  /** Epoch milliseconds. */
  readonly queuedAt: number;
  readonly withdrawnAt: number | null;
  readonly state: RetakeState;
}

/** What reel learned of the service, scoped by service (engine/run-times.ts). */
export interface LearnedRecords {
  /** The learned run times as last written (RunTimes.toJSON), if any. */
  readRunTimes(): Promise<string | undefined>;
  /** Replaces them: the last writer wins (runners of a fleet each write what they learned). */
  writeRunTimes(data: string): Promise<void>;
}

/**
 * The manifests run into each output folder (not scoped by service: the folder holds what any service
 * made), by the folder's absolute path: its reports (results.jsonl, index.html) list every video of
 * them, not only the last run's.
 */
export interface OutputRecords {
  /** `manifest` is run into the output folder `outDir`: its videos are the folder's from now on. */
  recordOutManifest(outDir: string, manifest: string): Promise<void>;
  /** The manifests recorded for `outDir`, by name. */
  outManifests(outDir: string): Promise<string[]>;
  /**
   * Drops `manifest` from `outDir`'s list (`reel forget`): false when it was not in it. Its jobs are
   * kept (the record of what was paid); a run of it adds it again.
   */
  forgetOutManifest(outDir: string, manifest: string): Promise<boolean>;
}

/** Caches of this machine (not scoped by service): hashes of local files, fetched remote sources. */
export interface LocalCaches {
  findFileHash(path: string, stamp: FileStamp): Promise<string | undefined>;
  recordFileHash(path: string, stamp: FileStamp, sha256: string): Promise<void>;
  findRemote(url: string): Promise<{ sha256: string; path: string; size: number } | undefined>;
  recordRemote(url: string, sha256: string, path: string, size: number): Promise<void>;
}

/** Why a runner was taken for lost: silent past its lease, or its process gone (seen on its machine). */
export type LostWhy = "silent" | "gone";

/** What a takeover found and sorted (FleetStore.takeOverLost). */
export interface TakeOver {
  /** Runners found silent past their lease, or their process gone on this machine, now marked lost. */
  readonly lost: readonly {
    readonly id: number;
    readonly host: string;
    readonly pid: number;
    readonly why: LostWhy;
  }[];
  /** Submissions without an answer, now uncertain. */
  readonly uncertain: number;
  /** Tasks no live runner followed, now free to follow. */
  readonly released: number;
  /** Every task no runner follows now (released by this takeover or before): any runner may follow them. */
  readonly unheld: number;
  /** Speech calls without an answer, now uncertain. */
  readonly speech: number;
  /** Upload intents without an asset, dropped (uploaded again if needed; no credits). */
  readonly uploads: number;
}

/**
 * What a store shared by a fleet of runners adds (PostgreSQL); a state file has none. Each
 * runner holds the jobs it submits and the tasks it follows while its lease lasts (its heartbeat);
 * another runner takes the work of one silent past its lease over.
 */
export interface FleetStore {
  /** This runner's id in the store. */
  readonly runnerId: number;
  /** How long a silent runner keeps its work, in milliseconds. */
  readonly leaseMs: number;
  /** How often this runner confirms its lease, in milliseconds. */
  readonly heartbeatMs: number;
  /** Sorts the work of runners gone or silent past their lease (see TakeOver). Any time, by any runner. */
  takeOverLost(): Promise<TakeOver>;
  /**
   * Makes this runner the follower of job `id`'s task: false when a live runner follows it, or it is
   * no longer submitted.
   */
  holdTask(id: number): Promise<boolean>;
  /** Of `ids`, the jobs another live runner holds (being submitted, or their task followed). */
  heldElsewhere(ids: readonly number[]): Promise<Set<number>>;
  /**
   * True when this runner has not confirmed its lease for so long (by its own clock: it was paused,
   * or cut off) that another may have taken its work: no request may leave on an intent it holds.
   */
  leaseInDoubt(): boolean;
  /** `listener` is told once if this runner learns it was taken over: it must stop. */
  onLeaseLost(listener: (error: LeaseLostError) => void): void;
  /**
   * Tells the other runners at once that a slot of the account freed here and this runner has no job
   * waiting for it (see pg/slot-notices.ts). A hint: never rejects, and one lost costs only a wait.
   */
  slotFree(): Promise<void>;
  /** `listener` is called for each slot another runner freed and told of (slotFree). */
  onSlotFree(listener: () => void): void;
  /** What the fleet is doing now (for the live display); undefined when the store does not answer. */
  view(): Promise<FleetView | undefined>;
  /**
   * `listener` is told when the store stops answering (`down`: every operation waits and tries again,
   * so no new work is taken) and when it answers again (`up`). See pg/outage.ts.
   */
  onOutage(listener: (event: OutageEvent) => void): void;
  /**
   * `listener` is told of each takeover that found something (a runner lost, its submissions made
   * uncertain, its uploads dropped), whichever call made it; those found before any listener are
   * told to the first. Returns the unsubscribe.
   */
  onTakeOver(listener: (found: TakeOver) => void): () => void;
}

/**
 * What the fleet of a service is doing now, as one runner sees it (FleetStore.view): counts of the
 * whole account, read in one statement over indexes whose size is the bound, not the jobs.
 */
export interface FleetView {
  /** Generations of the service unfinished now (being submitted, or at the service), by all runners. */
  readonly inFlight: number;
  /** Of them, this runner's. */
  readonly mine: number;
  /** Uncertain submissions still holding a slot (see pg/lease.ts UNCERTAIN_HOLD_MS). */
  readonly uncertainHeld: number;
  /** Runners of the service heard within their lease, this one included. */
  readonly runners: number;
  /** The account's bound: the smallest --concurrency of those runners (0: none said one). */
  readonly bound: number;
}

/** A shared store's outage, as the engine is told of it (FleetStore.onOutage). */
export type OutageEvent =
  | { readonly state: "down"; readonly error: string; readonly limitMs: number }
  | { readonly state: "up"; readonly downMs: number };

/** What `reel events` asks of the store's events (src/events). */
export interface EventQuery {
  /** Events after this one (its id, the stream's `seq`). @defaultValue 0 */
  readonly afterId?: number;
  /** Events recorded at or after this time (epoch ms). */
  readonly since?: number;
  /** @defaultValue 1000 */
  readonly limit?: number;
}

/**
 * The event stream's records (src/events, docs/events.md). The state changes record their events
 * in their own transaction; these add the events that are no state change, and read them back.
 */
export interface EventRecords {
  /**
   * Records an event of the stream that is no state change (`kind` its type, `detail` its fields as
   * JSON): committed with the store's next writes, or alone soon after. Never awaited, never throws;
   * lost only with the writes of the moment a crash interrupts.
   */
  noteEvent(kind: string, detail: string | null, jobKey: string | null): void;
  /** The store's events (every runner's) after `query.afterId`, oldest first. */
  readEvents(query: EventQuery): Promise<StoredEvent[]>;
  /**
   * Tells `listener` this process's events once they are committed, in the order recorded, until
   * the returned function is called (which tells the last ones first).
   */
  followOwnEvents(listener: (events: readonly StoredEvent[]) => void): () => Promise<void>;
  /** Deletes the events recorded before `before` (epoch ms); returns how many. */
  pruneEvents(before: number): Promise<number>;
}

/** The whole store, as a run uses it. */
export interface JobStore
  extends
    EventRecords,
    JobRecords,
    AssetRecords,
    SpeechRecords,
    BudgetRecords,
    NamedBudgetRecords,
    LearnedRecords,
    OutputRecords,
    LocalCaches,
    ReviewRecords {
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
