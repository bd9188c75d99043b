// The state file: one SQLite database that records every step a run takes, so that a run stopped at
// any moment (even by kill -9) resumes without paying twice and without losing a result.
//
// Rules this module keeps:
// - Group commit: the writes of one turn of the event loop share one IMMEDIATE transaction, committed
//   at the end of that turn (setImmediate), before any I/O callback can act on them. No await runs
//   inside it, since better-sqlite3 is synchronous. A kill -9 can lose only the writes of the turn it
//   interrupts, exactly as if it had come a moment earlier. Per job, a run makes about four writes;
//   one commit each cost more CPU than the rest of the job (fcntl locks, WAL appends).
//   A failing write undoes only itself: one that runs a single statement is undone by SQLite, a
//   longer one runs in its own SAVEPOINT. The events of a turn are inserted by one statement, just
//   before its COMMIT. Statements are what a job's writes cost (each call into SQLite costs at
//   least 4 µs), so a write runs as few as it can.
// - journal_mode=WAL with synchronous=NORMAL: a process crash never loses a commit; a power cut may
//   lose the last few. Only the writes that guard money, the intents written before a costed call,
//   are committed with synchronous=FULL, and their callers await that commit before the request
//   leaves: were an intent lost after the request left, a rerun would pay again. A lost answer is
//   harmless (the job is then found with an intent and no answer, and becomes `uncertain`). The
//   intents of one turn share one fsync.
// - The API key is never written here.
import { closeSync, existsSync, mkdirSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { ReelError } from "../errors.js";
import { canonicalBaseUrl } from "../service/base-url.js";
import { acquireLock, type StateLock } from "./lock.js";
import { MIGRATIONS } from "./migrations.js";

/** What the journal's check needs of a job version's row (see versionHead). */
export interface VersionHead {
  readonly id: number;
  readonly state: JobState;
  readonly attempts: number;
  readonly file: string | null;
}

export type JobState = "pending" | "submitting" | "submitted" | "Success" | "Fail" | "Canceled" | "uncertain";
export type FailKind = "local" | "rejected" | "task";

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

/** What reel knows of a video it wrote: its content, and the stamp (see migration 6) it had then. */
export interface VideoFacts {
  readonly size: number;
  readonly sha256: string;
  readonly stamp: string;
}

/** The little of a job row that a run starts from. */
export type JobHead = Pick<JobRow, "id" | "state" | "file">;

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
export interface RestoredJob {
  readonly key: string;
  readonly manifest: string;
  readonly videoId: string;
  readonly specHash: string;
  readonly specJson: string;
  readonly seconds: number;
  readonly model: string;
  readonly state: JobState;
  readonly failKind: FailKind | null;
  readonly attempts: number;
  readonly taskId: string | null;
  readonly taskStatus: string | null;
  readonly file: string | null;
  readonly outDir: string | null;
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

/**
 * E_STATE_FILE: the file cannot be used (damaged, foreign, unreadable), found before anything is
 * sent. E_STATE_WRITE: a write failed during the work (disk full).
 */
export class StateFileError extends ReelError {
  constructor(message: string, options?: { cause?: unknown; code?: "E_STATE_FILE" | "E_STATE_WRITE" }) {
    super(options?.code ?? "E_STATE_FILE", message, options);
  }
}

const APP_ID = "reel-state";

/** A job version's head, by the unique index (service, key, spec hash). */
const JOB_HEAD_SQL =
  "SELECT id, state, file FROM jobs WHERE service_id = ? AND job_key = ? AND spec_hash = ?";

/** Stores open for writing: a process that exits without closing one still commits its last turn. */
const openStores = new Set<StateStore>();
process.on("exit", () => {
  for (const store of openStores) store.flush();
});

export interface OpenStateOptions {
  /**
   * Service the rows belong to: asset and task ids are only meaningful on their own service.
   * Read-only users may leave it out to read every service's jobs (`listLatestJobs`).
   */
  readonly baseUrl?: string;
  /** Read-only use (plan, status): no lock, no migration, no service row created. */
  readonly readonly?: boolean;
  readonly now?: () => number;
  /**
   * Called, with the file locked and before any table is created, when the state holds nothing:
   * "missing" (no file was there) or "empty" (a file of no bytes, or with no tables). A reel state
   * file is never empty once opened, so an empty one beside earlier work is a state file lost (an
   * emptied file, a deleted WAL): the caller may throw to refuse it, before anything is paid again.
   */
  readonly whenNew?: (how: "missing" | "empty") => void;
}

/**
 * A write-ahead intent that did not win its row: it is no longer in the state the caller read (two
 * processes on one state file, whatever fooled the lock). Nothing may be sent for it.
 */
export class ClaimLostError extends ReelError {
  constructor(message: string) {
    super("E_STATE_CLAIMED", message);
  }
}

export class StateStore {
  private readonly serviceId: number;
  /** Prepared once per SQL text: preparing costs more than running these small statements. */
  private readonly statements = new Map<string, Database.Statement>();
  /** Savepoint nesting of the write in progress. */
  private depth = 0;
  private commitScheduled = false;
  /** Whether the turn's transaction commits with synchronous=FULL. */
  private fullTurn = false;
  /** Intents waiting for the turn's transaction to reach the disk. */
  private durableWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  /** Set when a commit failed: the store refuses further writes. */
  private failure: StateFileError | undefined;
  /** The turn's events as [at, job id, kind, detail], inserted with its COMMIT (see `event`). */
  private events: (string | number | null)[][] = [];
  /** The WAL file SQLite writes to, and its inode once seen (see checkWal). */
  private readonly walPath: string;
  private walIno: number | undefined;
  /** Upload intents this store wrote: one found that it did not write is another process's. */
  private readonly ownUploads = new Set<string>();
  /**
   * How the journal of costed calls in an output folder names this store's lines (output/journal.ts):
   * the state file's real path and the service's canonical base URL. Undefined when read-only.
   */
  readonly journalScope: { readonly state: string; readonly service: string } | undefined;

  private constructor(
    private readonly db: Database.Database,
    serviceId: number | undefined,
    private readonly lock: StateLock | undefined,
    private readonly now: () => number,
    readonly path: string,
    private readonly readonly: boolean,
    baseUrl: string | undefined,
  ) {
    this.serviceId = serviceId ?? -1;
    this.walPath = `${realStatePath(path)}-wal`;
    this.journalScope =
      readonly || baseUrl === undefined ? undefined : StateStore.journalScopeOf(path, baseUrl);
    if (!readonly) {
      openStores.add(this);
      this.walIno = statSync(this.walPath, { throwIfNoEntry: false })?.ino;
    }
  }

  static open(path: string, options: OpenStateOptions): StateStore {
    const readonly = options.readonly ?? false;
    if (readonly && !existsSync(path)) {
      throw new StateFileError(`no state file at ${path}`);
    }
    if (!readonly) mkdirSync(dirname(path), { recursive: true });
    checkHeader(path);
    const existed = existsSync(path);
    // A lock on the file itself (see lock.ts): every link to it, from any process, meets it.
    const lock = readonly ? undefined : acquireLock(realStatePath(path));
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { readonly, fileMustExist: readonly });
      db.pragma("busy_timeout = 5000");
      const check = db.pragma("quick_check", { simple: true });
      if (check !== "ok") {
        throw new StateFileError(
          `the state file ${path} is damaged (${String(check)}). It is the record of the credits spent, so reel does not recreate it: keep a copy, then move it away to start afresh (jobs already submitted would then be submitted again).`,
        );
      }
      if (!readonly) {
        if (options.whenNew && isEmpty(db)) options.whenNew(existed ? "empty" : "missing");
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        migrate(db, path);
      } else {
        checkOwned(db, path);
      }
      db.pragma("foreign_keys = ON");
      if (!readonly && options.baseUrl === undefined) throw new TypeError("baseUrl is required to write");
      const serviceId =
        options.baseUrl === undefined
          ? undefined
          : readonly
            ? (findService(db, options.baseUrl) ?? 0) // 0 matches no row: that service has none
            : ensureService(db, options.baseUrl);
      return new StateStore(db, serviceId, lock, options.now ?? Date.now, path, readonly, options.baseUrl);
    } catch (error) {
      db?.close();
      lock?.release();
      if (error instanceof ReelError) throw error;
      const code = (error as { code?: string }).code;
      if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
        throw new StateFileError(`${path} is not a reel state file or is damaged (${code}).`, {
          cause: error,
        });
      }
      // Read-only file or folder, no permission, a folder in its place...
      if (
        code?.startsWith("SQLITE_READONLY") ||
        code?.startsWith("SQLITE_CANTOPEN") ||
        code?.startsWith("SQLITE_IOERR")
      ) {
        throw new StateFileError(
          `cannot ${readonly ? "read" : "write"} the state file ${path} (${code}: ${(error as Error).message}). Check its permissions and its folder's, or point --state at another file.`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** `journalScope` of the state file at `path` (which may not exist yet) for the service `baseUrl`. */
  static journalScopeOf(path: string, baseUrl: string): { readonly state: string; readonly service: string } {
    return { state: realStatePath(path), service: canonicalBaseUrl(baseUrl) };
  }

  /** The base URL of the service whose jobs changed last in the file at `path`, if any. */
  static lastService(path: string): string | undefined {
    const store = StateStore.open(path, { readonly: true });
    try {
      const row = store.db
        .prepare(
          "SELECT services.base_url FROM jobs JOIN services ON services.id = jobs.service_id ORDER BY jobs.updated_at DESC LIMIT 1",
        )
        .get() as { base_url: string } | undefined;
      return row?.base_url;
    } catch {
      return undefined; // a file with no tables yet
    } finally {
      store.close();
    }
  }

  /** Commits the last turn and closes. Throws `writeFailure`, if any, once the file is released. */
  close(): void {
    try {
      if (this.db.open) {
        this.flush();
        openStores.delete(this);
        this.db.close();
      }
    } finally {
      this.lock?.release();
    }
    if (this.failure) throw this.failure;
  }

  /** A query of whole job rows, read as arrays (see jobRowOf). */
  private jobs(where: string): Database.Statement {
    return this.sql(`SELECT ${JOB_COLUMNS} FROM jobs ${where}`, true);
  }

  /** The prepared statement of `text`; `raw`: rows come back as arrays of values. */
  private sql(text: string, raw = false): Database.Statement {
    const key = raw ? `raw:${text}` : text;
    let statement = this.statements.get(key);
    if (!statement) {
      statement = this.db.prepare(text);
      if (raw) statement.raw(true);
      this.statements.set(key, statement);
    }
    return statement;
  }

  /**
   * Runs `fn` inside the current turn's transaction (opened here if none is), as one savepoint: if
   * `fn` throws, its own changes and events are undone and the turn's other writes stay. Nested
   * calls join. `durable`: this turn commits with synchronous=FULL (see `durable()`).
   */
  private write<T>(fn: () => T, durable = false, savepoint = true): T {
    if (this.failure) throw this.failure;
    if (this.depth > 0) return fn();
    if (durable && !this.fullTurn) {
      // SQLite changes the safety level only between transactions: commit what the turn wrote so
      // far as it was, and go on in a FULL transaction.
      if (this.db.inTransaction) this.commitOrBreak();
      this.sql("PRAGMA synchronous = FULL").run();
      this.fullTurn = true;
    }
    if (!this.db.inTransaction) {
      this.sql("BEGIN IMMEDIATE").run();
      if (!this.commitScheduled) {
        this.commitScheduled = true;
        setImmediate(() => this.commit());
      }
    }
    if (savepoint) this.sql("SAVEPOINT w").run();
    const eventsBefore = this.events.length;
    this.depth++;
    try {
      const result = fn();
      if (savepoint) this.sql("RELEASE w").run();
      return result;
    } catch (error) {
      this.events.length = eventsBefore;
      if (this.db.inTransaction) {
        if (savepoint) {
          this.sql("ROLLBACK TO w").run();
          this.sql("RELEASE w").run();
        }
      } else {
        // SQLite rolled the whole turn back by itself (disk full, I/O error): the turn's other writes,
        // intents included, are gone. Nothing more may be sent.
        this.breakStore(error);
        this.rejectWaiters();
      }
      throw error;
    } finally {
      this.depth--;
    }
  }

  /**
   * `write` for a function that runs a single SQL statement (and records events): SQLite undoes a
   * failed statement by itself, so no savepoint is needed. Two statements fewer, on writes a run
   * makes four times per job.
   */
  private writeStatement<T>(fn: () => T, durable = false): T {
    return this.write(fn, durable, false);
  }

  private breakStore(error: unknown, then = "fix the cause (disk space?) and rerun"): StateFileError {
    this.failure ??= new StateFileError(
      `could not write the state file ${this.path}: ${(error as Error).message}. Work stopped; ${then}.`,
      { cause: error, code: "E_STATE_WRITE" },
    );
    return this.failure;
  }

  private rejectWaiters(): void {
    const waiters = this.durableWaiters;
    this.durableWaiters = [];
    for (const waiter of waiters) waiter.reject(this.failure!);
  }

  /** Resolves once this turn's writes are on disk (fsync'ed): for intents that precede a costed call. */
  private durable(): Promise<void> {
    if (!this.db.inTransaction) return Promise.resolve(); // committed already (by close or flush)
    return new Promise((resolve, reject) => this.durableWaiters.push({ resolve, reject }));
  }

  /** Ends the turn: commits its transaction and tells the intents waiting on it. */
  private commit(): void {
    this.commitScheduled = false;
    if (this.failure) {
      this.rejectWaiters();
      return;
    }
    const waiters = this.durableWaiters;
    this.durableWaiters = [];
    try {
      if (this.db.open && this.db.inTransaction) this.commitOrBreak();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error as Error);
      return;
    } finally {
      if (this.fullTurn && this.db.open) {
        this.sql("PRAGMA synchronous = NORMAL").run();
        this.fullTurn = false;
      }
    }
    for (const waiter of waiters) waiter.resolve();
  }

  /**
   * COMMIT. A commit that fails (disk full, I/O error) breaks the store: every later write throws,
   * so no costed call is made that the file could not record.
   */
  private commitOrBreak(): void {
    const events = this.events;
    this.events = [];
    try {
      if (events.length > 0) {
        this.sql(
          "INSERT INTO events (at, job_id, kind, detail) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)",
        ).run(JSON.stringify(events));
      }
      this.sql("COMMIT").run();
    } catch (error) {
      const failure = this.breakStore(error);
      if (this.db.inTransaction) this.sql("ROLLBACK").run();
      throw failure;
    }
    this.checkWal();
  }

  /**
   * The WAL holds every commit since the last checkpoint. Deleted while reel runs (by hand, a
   * cleaning script), SQLite goes on writing into the unlinked file, and all of it, intents
   * included, is lost when the process ends: a rerun would find those jobs unsent and pay again.
   * Checked after each commit (one stat): the commits are copied into the database file by a
   * checkpoint (SQLite still holds the WAL open), and the store breaks, so that no costed call
   * follows. A rerun starts with a fresh WAL.
   */
  private checkWal(): void {
    const ino = statSync(this.walPath, { throwIfNoEntry: false })?.ino;
    if (this.walIno === undefined || ino === this.walIno) {
      this.walIno ??= ino;
      return;
    }
    let saved = "what it recorded was saved into the state file";
    try {
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (error) {
      saved = `saving what it recorded failed too (${(error as Error).message})`;
    }
    throw this.breakStore(
      new Error(
        `its write-ahead log ${this.walPath} was ${ino === undefined ? "deleted" : "replaced"} while reel was running; ${saved}`,
      ),
      "nothing more is sent. Rerun to resume (a fresh log is made); do not delete a state file's -wal file while reel runs",
    );
  }

  /** Why the state file can no longer be written, once a commit failed. */
  get writeFailure(): StateFileError | undefined {
    return this.failure;
  }

  /** Commits now what this turn wrote (before closing, and before the process exits). */
  flush(): void {
    if (!this.db.open || this.readonly) return;
    try {
      this.commit();
    } catch {
      // Already recorded as `writeFailure`; closing must still release the file and its lock.
    }
  }

  /** Records an event of the write in progress; the turn's events are inserted with its COMMIT. */
  private event(jobId: number | null, kind: string, detail?: string): void {
    this.events.push([this.now(), jobId, kind, detail ?? null]);
  }

  // ---- jobs ----

  /** The row of this job version, created as `pending` if new. */
  upsertJob(job: NewJob): JobRow {
    const { id } = this.upsertJobs([job])[0]!;
    return this.getJob(id);
  }

  /**
   * `upsertJob` for many jobs in one transaction: a run of 10,000 jobs starts in milliseconds. Returns
   * only what a run starts from, not whole rows (10,000 of those weigh about 15 MB).
   */
  upsertJobs(jobs: readonly NewJob[]): JobHead[] {
    return this.write(() => jobs.map((job) => this.insertJob(job)));
  }

  private insertJob(job: NewJob): JobHead {
    const now = this.now();
    this.sql(
      `INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
         ON CONFLICT (service_id, job_key, spec_hash) DO NOTHING`,
    ).run(
      this.serviceId,
      job.key,
      job.manifest,
      job.videoId,
      job.specHash,
      job.specJson,
      job.seconds,
      job.model,
      now,
      now,
    );
    return this.sql(JOB_HEAD_SQL).get(this.serviceId, job.key, job.specHash) as JobHead;
  }

  /**
   * Rows made from the records in the output folder (`reel run --rebuild-state`, see src/output/recovery.ts): a
   * job version the state does not know is added; one it knows only as unsent or as an intent
   * (`pending`, `submitting`: an older copy of the state) takes what its record shows, and one known
   * as `uncertain` takes a task id its record (the journal) shows. Others are kept as they are.
   * Returns how many rows were written.
   */
  restoreJobs(jobs: readonly RestoredJob[]): number {
    return this.write(() => {
      let written = 0;
      for (const job of jobs) {
        const head = this.sql(JOB_HEAD_SQL).get(this.serviceId, job.key, job.specHash) as JobHead | undefined;
        const held = head
          ? (this.sql("SELECT spec_json, attempts FROM jobs WHERE id = ?").get(head.id) as {
              spec_json: string;
              attempts: number;
            })
          : undefined;
        // An uncertain row (a submission whose answer the state lost) takes the task id of that same
        // attempt that the journal kept.
        const answered = head?.state === "uncertain" && job.taskId !== null && job.attempts >= held!.attempts;
        if (head && head.state !== "pending" && head.state !== "submitting" && !answered) continue;
        // The spec the row holds, when the record has none (results.jsonl and the journal carry none).
        const specJson = held && job.specJson === "null" ? held.spec_json : job.specJson;
        if (head) this.sql("DELETE FROM jobs WHERE id = ?").run(head.id);
        const values = [
          this.serviceId,
          job.key,
          job.manifest,
          job.videoId,
          job.specHash,
          specJson,
          job.seconds,
          job.model,
          job.state,
          job.failKind,
          job.attempts,
          job.taskId,
          job.taskStatus,
          job.file,
          job.outDir,
          job.error,
          job.createdAt,
          job.submittedAt,
          job.finishedAt,
          job.downloadedAt,
          this.now(),
        ];
        const { lastInsertRowid } = this.sql(
          `INSERT INTO jobs (${head ? "id, " : ""}service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, file, out_dir, error, created_at, submitted_at, finished_at, downloaded_at, updated_at)
             VALUES (${head ? "?, " : ""}${values.map(() => "?").join(", ")})`,
        ).run(...(head ? [head.id, ...values] : values));
        this.event(
          Number(lastInsertRowid),
          "restored",
          `${job.state}${job.taskId ? ` (task ${job.taskId})` : ""}`,
        );
        written++;
      }
      return written;
    });
  }

  /** The state and attempts of this job version, if recorded (the journal's check at start). */
  versionHead(key: string, specHash: string): VersionHead | undefined {
    return this.sql(
      "SELECT id, state, attempts, file FROM jobs WHERE service_id = ? AND job_key = ? AND spec_hash = ?",
    ).get(this.serviceId, key, specHash) as VersionHead | undefined;
  }

  /** The attempts of job `id` (once its intent is written: the number of the attempt being made). */
  attemptsOf(id: number): number {
    return (this.sql("SELECT attempts FROM jobs WHERE id = ?").get(id) as { attempts: number }).attempts;
  }

  /** Whether this job version is recorded (the index lookup of upsertJobs, no row read). */
  hasJob(key: string, specHash: string): boolean {
    return this.sql(JOB_HEAD_SQL).get(this.serviceId, key, specHash) !== undefined;
  }

  findJob(key: string, specHash: string): JobRow | undefined {
    const values = this.jobs("WHERE service_id = ? AND job_key = ? AND spec_hash = ?").get(
      this.serviceId,
      key,
      specHash,
    ) as unknown[] | undefined;
    return values && jobRowOf(values);
  }

  findJobById(id: number): JobRow | undefined {
    const values = this.jobs("WHERE id = ?").get(id) as unknown[] | undefined;
    return values && jobRowOf(values);
  }

  getJob(id: number): JobRow {
    return jobRowOf(this.jobs("WHERE id = ?").get(id) as unknown[]);
  }

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
  ): { key: string; baseUrl: string }[] {
    const elsewhere = new Map<string, string>(); // versionKey -> base URL
    const rows = this.sql(
      `SELECT jobs.job_key, jobs.spec_hash, services.base_url FROM jobs
         JOIN services ON services.id = jobs.service_id
         WHERE jobs.service_id <> ? AND jobs.attempts > 0 ORDER BY jobs.id`,
      true,
    ).all(this.serviceId) as [string, string, string][];
    for (const [key, hash, baseUrl] of rows) {
      if (!ignore.includes(baseUrl)) elsewhere.set(versionKey(key, hash), baseUrl);
    }
    if (elsewhere.size === 0) return [];
    const found: { key: string; baseUrl: string }[] = [];
    for (const job of jobs) {
      const baseUrl = elsewhere.get(versionKey(job.key, job.specHash));
      if (baseUrl === undefined) continue;
      const here = this.findJob(job.key, job.specHash);
      if (here === undefined || (here.attempts === 0 && here.state === "pending")) {
        found.push({ key: job.key, baseUrl });
      }
    }
    return found;
  }

  /** The job versions of this service whose video was downloaded, as versionKey(key, spec hash). */
  downloadedVersions(): Set<string> {
    const rows = this.sql(
      "SELECT job_key, spec_hash FROM jobs WHERE service_id = ? AND state = 'Success' AND file IS NOT NULL",
      true,
    ).all(this.serviceId) as [string, string][];
    return new Set(rows.map(([key, hash]) => versionKey(key, hash)));
  }

  /**
   * For each spec hash that a job of this service was generated with (Success), the key of one such
   * job: a new job with the same request under another name (a renamed manifest) would pay again.
   */
  madeSpecs(): Map<string, string> {
    const rows = this.sql(
      "SELECT spec_hash, job_key FROM jobs WHERE service_id = ? AND state = 'Success' ORDER BY id",
      true,
    ).all(this.serviceId) as [string, string][];
    return new Map(rows);
  }

  /** Every job version of this service, by versionKey(key, spec hash): one query for a whole run. */
  jobsByVersion(): Map<string, JobRow> {
    return new Map(this.listJobs().map((row) => [versionKey(row.job_key, row.spec_hash), row]));
  }

  /** Every job version of this service, newest last. */
  listJobs(): JobRow[] {
    return (this.jobs("WHERE service_id = ? ORDER BY id").all(this.serviceId) as unknown[][]).map(jobRowOf);
  }

  /** The current version of every job, of every service (or of this store's service when it has one). */
  listLatestJobs(): (JobRow & { base_url: string })[] {
    const version = this.db.pragma("user_version", { simple: true }) as number;
    if (version === 0) return [];
    // The version whose video holds <id>.mp4 (the manifest's current one: an edit that was undone
    // gives the older version its name back), else the newest version. The name is output/layout.ts's
    // videoFile, spelled in SQL.
    return this.sql(
      `SELECT jobs.*, services.base_url FROM jobs JOIN services ON services.id = jobs.service_id
         WHERE jobs.id IN (
           SELECT id FROM (
             SELECT id, row_number() OVER (
               PARTITION BY service_id, job_key
               ORDER BY coalesce(file = manifest || '/' || video_id || '.mp4', 0) DESC, id DESC
             ) AS rank
             FROM jobs WHERE (? < 0 OR service_id = ?)
           ) WHERE rank = 1)
         ORDER BY jobs.manifest, jobs.video_id`,
    ).all(this.serviceId, this.serviceId) as (JobRow & { base_url: string })[];
  }

  /**
   * Forgets the jobs of `manifest` that nothing was ever sent for (pending, no attempt counted, no
   * task) and that it no longer lists (`keep`: versionKeys): a video removed, or a version edited
   * away, before its submission. They are no record of credits spent, and would show as pending in
   * `status` for good. Returns how many.
   */
  forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): number {
    return this.write(() => {
      const rows = this.sql(
        "SELECT id, job_key, spec_hash FROM jobs WHERE service_id = ? AND manifest = ? AND state = 'pending' AND attempts = 0 AND task_id IS NULL",
        true,
      ).all(this.serviceId, manifest) as [number, string, string][];
      let forgotten = 0;
      for (const [id, key, hash] of rows) {
        if (keep.has(versionKey(key, hash))) continue;
        this.sql("DELETE FROM jobs WHERE id = ?").run(id);
        this.event(id, "forgotten", `${key}: no longer in its manifest; nothing was sent`);
        forgotten++;
      }
      return forgotten;
    });
  }

  /** Jobs that have a task on the service that has not ended: they must be followed, never resubmitted. */
  listInFlight(): JobRow[] {
    return (
      this.jobs("WHERE service_id = ? AND state = 'submitted' ORDER BY id").all(this.serviceId) as unknown[][]
    ).map(jobRowOf);
  }

  /**
   * A submission whose intent was written but whose answer was not (the process died in between):
   * it may have reached the service. Called once at start.
   */
  markInterruptedSubmissionsUncertain(): number {
    return this.write(() => {
      const rows = this.sql("SELECT id FROM jobs WHERE service_id = ? AND state = 'submitting'").all(
        this.serviceId,
      ) as { id: number }[];
      for (const { id } of rows) {
        this.setJob(id, {
          state: "uncertain",
          error: "the run stopped while this job was being submitted; the service may have received it",
        });
        this.event(id, "uncertain", "interrupted submission");
      }
      return rows.length;
    });
  }

  /** Updates `fields` of job `id`; returns the updated_at it recorded. */
  private setJob(id: number, fields: Record<string, string | number | null>): number {
    // Positional parameters: binding by name costs more, on a write made several times per job.
    const names = Object.keys(fields);
    const now = this.now();
    this.sql(`UPDATE jobs SET ${names.map((n) => `${n} = ?`).join(", ")}, updated_at = ? WHERE id = ?`).run(
      ...Object.values(fields),
      now,
      id,
    );
    return now;
  }

  /**
   * Write-ahead intent of a costed submission: resolves once it is on disk; only then may the request
   * leave. A compare-and-set: the row is claimed only from a state a submission may start from
   * (`pending`, which --retry-failed and --resubmit-uncertain return a job to first, or a failure
   * before anything was sent). Resolves false, with nothing written, when the row is in another
   * state: another process on this state file claimed it, and nothing may be sent.
   */
  async markSubmitting(id: number): Promise<boolean> {
    const claimed = this.writeStatement(() => {
      const changed = this.sql(
        `UPDATE jobs SET state = 'submitting', attempts = attempts + 1, fail_kind = NULL, error = NULL, task_id = NULL, task_status = NULL, result_url = NULL, updated_at = ?
           WHERE id = ? AND (state = 'pending' OR (state IN ('Fail', 'Canceled') AND fail_kind = 'local'))`,
      ).run(this.now(), id).changes;
      if (changed === 1) {
        this.event(id, "submitting");
        return true;
      }
      // No intent, no request: a job whose row is gone must never be paid for unrecorded.
      if (!this.findJobById(id))
        throw new StateFileError(`job ${id} is not in the state file; it was not submitted`);
      return false;
    }, true);
    if (claimed) await this.durable();
    return claimed;
  }

  /**
   * An intent whose request was not sent after all (the run stopped, or the job was withdrawn, while
   * the intent was being committed): the job is pending again and the attempt is given back.
   */
  withdrawSubmitting(id: number): void {
    this.write(() => {
      this.sql("UPDATE jobs SET attempts = max(0, attempts - 1) WHERE id = ?").run(id);
      this.setJob(id, { state: "pending" });
      this.event(id, "withdrawn", "not sent");
    });
  }

  /**
   * The answer to a submission. Not forced to disk: if a power cut loses it, the job is found in
   * `submitting` and becomes uncertain, never resubmitted; only the intent must be durable.
   */
  markSubmitted(id: number, taskId: string): void {
    this.writeStatement(() => {
      const now = this.now();
      this.setJob(id, {
        state: "submitted",
        task_id: taskId,
        task_status: "PreProcessing",
        submitted_at: now,
      });
      this.event(id, "submitted", taskId);
    });
  }

  markUncertain(id: number, error: string): void {
    this.writeStatement(() => {
      this.setJob(id, { state: "uncertain", error });
      this.event(id, "uncertain", error);
    });
  }

  markFailed(id: number, kind: FailKind, error: string): void {
    this.writeStatement(() => {
      this.setJob(id, { state: "Fail", fail_kind: kind, error, finished_at: this.now() });
      this.event(id, "fail", `${kind}: ${error}`);
    });
  }

  /**
   * The service refused a submission for certain (401, 402, 429, 503, connection refused): nothing
   * was created, so the attempt counted by markSubmitting is given back.
   */
  markRefused(id: number, error: string): void {
    this.write(() => {
      this.sql("UPDATE jobs SET attempts = max(0, attempts - 1) WHERE id = ?").run(id);
      this.setJob(id, { state: "pending", fail_kind: null, error });
      this.event(id, "refused", error);
    });
  }

  /**
   * Back to `pending` for a new attempt (retry of a failure or of an uncertain submission). Only from
   * those final states: false, with nothing written, when the row has moved on meanwhile (another
   * process on this state file retried it already: pending again, it would be paid for twice).
   */
  markPending(id: number, why: string): boolean {
    return this.writeStatement(() => {
      const changed = this.sql(
        "UPDATE jobs SET state = 'pending', fail_kind = NULL, error = NULL, updated_at = ? WHERE id = ? AND state IN ('Fail', 'Canceled', 'uncertain')",
      ).run(this.now(), id).changes;
      if (changed === 1) this.event(id, "pending", why);
      return changed === 1;
    });
  }

  /** A status seen by polling. Final statuses move the job to that state. */
  recordTaskStatus(
    id: number,
    status: string,
    resultUrl: string | undefined,
    reason: string | undefined,
  ): void {
    this.writeStatement(() => {
      const now = this.now();
      const fields: Record<string, string | number | null> = { task_status: status };
      if (status === "Running") fields.running_at = now;
      if (resultUrl !== undefined) fields.result_url = resultUrl;
      if (status === "Success" || status === "Fail" || status === "Canceled") {
        fields.state = status;
        fields.finished_at = now;
        if (status === "Fail") {
          fields.fail_kind = "task";
          fields.error = reason ?? "the service reported Fail without a reason";
        }
        if (status === "Canceled") fields.error = reason ?? "the task was canceled on the service";
      }
      this.setJob(id, fields);
      this.event(id, "status", status);
    });
  }

  /** A fresh result URL (the old one expired). */
  recordResultUrl(id: number, url: string): void {
    this.writeStatement(() => this.setJob(id, { result_url: url }));
  }

  /**
   * Records the video of `row` at `file` in the output folder `outDir`; returns the row as now
   * recorded. `video`: what was written (a fresh download); a video moved keeps what it had.
   */
  markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): JobRow {
    return this.writeStatement(() => {
      const changes = {
        file,
        out_dir: outDir,
        downloaded_at: this.now(),
        error: null,
        ...(video && { file_size: video.size, file_sha256: video.sha256, file_stamp: video.stamp }),
      };
      const updatedAt = this.setJob(row.id, changes);
      this.event(row.id, "downloaded", file);
      return { ...row, ...changes, updated_at: updatedAt };
    });
  }

  /**
   * Versions of a job whose video is recorded at `file` of the output folder `outDir`, by any
   * service: a video another service made is moved aside too, never written over.
   */
  listJobsWithFile(key: string, file: string, outDir: string): JobRow[] {
    return (
      // `service_id IN (...)`: the unique index (service_id, job_key, spec_hash) serves it, probed
      // once per service, where a condition on job_key alone would read every row at each download.
      (
        this.jobs(
          "WHERE service_id IN (SELECT id FROM services) AND job_key = ? AND file = ? AND (out_dir IS NULL OR out_dir = ?)",
        ).all(key, file, outDir) as unknown[][]
      ).map(jobRowOf)
    );
  }

  /** The file of a Success was lost (deleted by the user): download it again from its task. */
  forgetDownload(row: JobRow): JobRow {
    return this.writeStatement(() => {
      const changes = {
        file: null,
        out_dir: null,
        downloaded_at: null,
        file_size: null,
        file_sha256: null,
        file_stamp: null,
      };
      return { ...row, ...changes, updated_at: this.setJob(row.id, changes) };
    });
  }

  recordJobError(id: number, error: string): void {
    this.writeStatement(() => this.setJob(id, { error }));
  }

  /** The job's video was found whole: an error left by an earlier failure (a full disk) no longer holds. */
  clearJobError(row: JobRow): JobRow {
    return this.writeStatement(() => ({
      ...row,
      error: null,
      updated_at: this.setJob(row.id, { error: null }),
    }));
  }

  /** The job's video was read again and holds what reel wrote: its new stamp spares the next read. */
  recordVideoStamp(row: JobRow, stamp: string): JobRow {
    return this.writeStatement(() => ({
      ...row,
      file_stamp: stamp,
      updated_at: this.setJob(row.id, { file_stamp: stamp }),
    }));
  }

  // ---- assets ----

  findAsset(sha256: string): string | undefined {
    const row = this.sql("SELECT asset_id FROM assets WHERE service_id = ? AND sha256 = ?").get(
      this.serviceId,
      sha256,
    ) as { asset_id: string } | undefined;
    return row?.asset_id;
  }

  /**
   * The intent of an upload. One intent wins: an intent this store did not write (intents of a dead
   * run are taken at start, see takeInterruptedUploads) is another process's upload of the same
   * content, under way, and this one throws ClaimLostError instead of uploading a second copy.
   */
  markUploading(sha256: string): void {
    this.write(() => {
      const changed = this.sql(
        "INSERT INTO upload_intents (service_id, sha256, started_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      ).run(this.serviceId, sha256, this.now()).changes;
      if (changed === 0 && !this.ownUploads.has(sha256)) {
        throw new ClaimLostError(
          `the file of sha256 ${sha256.slice(0, 12)} is being uploaded by another process using this state file; not uploaded twice`,
        );
      }
      this.ownUploads.add(sha256);
    });
  }

  /** An upload the service refused for certain: nothing to report at the next start. */
  forgetUploadIntent(sha256: string): void {
    this.writeStatement(() => {
      this.sql("DELETE FROM upload_intents WHERE service_id = ? AND sha256 = ?").run(this.serviceId, sha256);
    });
  }

  /**
   * Uploads whose intent was written but whose asset id was not: a run died during them. They will
   * be uploaded again (an extra copy on the service, no credits). Returns how many, and forgets them.
   */
  takeInterruptedUploads(): number {
    return this.writeStatement(() => {
      const n = this.sql("DELETE FROM upload_intents WHERE service_id = ?").run(this.serviceId).changes;
      if (n > 0) this.event(null, "uploads-interrupted", String(n));
      return n;
    });
  }

  recordAsset(sha256: string, assetId: string, size: number): void {
    this.write(() => {
      this.sql("DELETE FROM upload_intents WHERE service_id = ? AND sha256 = ?").run(this.serviceId, sha256);
      this.sql(
        `INSERT INTO assets (service_id, sha256, asset_id, size, uploaded_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (service_id, sha256) DO UPDATE SET asset_id = excluded.asset_id, uploaded_at = excluded.uploaded_at`,
      ).run(this.serviceId, sha256, assetId, size, this.now());
    });
  }

  /** Whether reel uploaded this asset, or made it as speech, on this service. */
  madeAsset(assetId: string): boolean {
    return (
      this.sql(
        "SELECT 1 FROM assets WHERE service_id = ? AND asset_id = ? UNION ALL SELECT 1 FROM speech WHERE service_id = ? AND asset_id = ? LIMIT 1",
      ).get(this.serviceId, assetId, this.serviceId, assetId) !== undefined
    );
  }

  /** The service lost this asset (deleted): the next use uploads it again. */
  forgetAssetId(assetId: string): void {
    this.write(() => {
      this.sql("DELETE FROM assets WHERE service_id = ? AND asset_id = ?").run(this.serviceId, assetId);
      this.sql("DELETE FROM speech WHERE service_id = ? AND asset_id = ?").run(this.serviceId, assetId);
    });
  }

  // ---- speech ----

  findSpeech(voiceId: string, text: string): SpeechRow | undefined {
    return this.sql(
      "SELECT state, asset_id, duration, error FROM speech WHERE service_id = ? AND voice_id = ? AND text = ?",
    ).get(this.serviceId, voiceId, text) as SpeechRow | undefined;
  }

  /**
   * Write-ahead intent of a costed speech call: resolves once it is on disk. A compare-and-set: made
   * only where no speech row is, or over an `uncertain` one (--resubmit-uncertain). A row `creating`
   * or `done` was written by another process on this state file since the caller looked: it throws
   * ClaimLostError, and the speech is not paid for twice.
   */
  async markSpeechCreating(voiceId: string, text: string): Promise<void> {
    this.writeStatement(() => {
      const changed = this.sql(
        `INSERT INTO speech (service_id, voice_id, text, state, updated_at) VALUES (?, ?, ?, 'creating', ?)
           ON CONFLICT (service_id, voice_id, text) DO UPDATE SET state = 'creating', asset_id = NULL, error = NULL, updated_at = excluded.updated_at
           WHERE speech.state = 'uncertain'`,
      ).run(this.serviceId, voiceId, text, this.now()).changes;
      if (changed !== 1) {
        throw new ClaimLostError(
          `speech for voice ${voiceId} ("${text.slice(0, 40)}") is being or was made by another process using this state file; not paid for twice (rerun to use it)`,
        );
      }
    }, true);
    await this.durable();
  }

  markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): void {
    this.writeStatement(() => {
      this.sql(
        "UPDATE speech SET state = 'done', asset_id = ?, duration = ?, error = NULL, updated_at = ? WHERE service_id = ? AND voice_id = ? AND text = ?",
      ).run(assetId, duration, this.now(), this.serviceId, voiceId, text);
    });
  }

  markSpeechUncertain(voiceId: string, text: string, error: string): void {
    this.writeStatement(() => {
      this.sql(
        "UPDATE speech SET state = 'uncertain', error = ?, updated_at = ? WHERE service_id = ? AND voice_id = ? AND text = ?",
      ).run(error, this.now(), this.serviceId, voiceId, text);
    });
  }

  /** A speech call that failed for certain (refused): nothing was made, forget the intent. */
  clearSpeech(voiceId: string, text: string): void {
    this.writeStatement(() => {
      this.sql("DELETE FROM speech WHERE service_id = ? AND voice_id = ? AND text = ?").run(
        this.serviceId,
        voiceId,
        text,
      );
    });
  }

  /** Speech intents without an answer from a run that died: they may have been made. */
  markInterruptedSpeechUncertain(): number {
    return this.write(
      () =>
        this.db
          .prepare(
            "UPDATE speech SET state = 'uncertain', error = 'the run stopped while this speech was being created' WHERE service_id = ? AND state = 'creating'",
          )
          .run(this.serviceId).changes,
    );
  }

  // ---- local caches (not scoped by service) ----

  findFileHash(path: string, stamp: FileStamp): string | undefined {
    const row = this.sql(
      "SELECT sha256 FROM file_hashes WHERE path = ? AND size = ? AND mtime_ns = ? AND ctime_ns = ? AND ino = ?",
    ).get(path, stamp.size, stamp.mtimeNs, stamp.ctimeNs, stamp.ino) as { sha256: string } | undefined;
    return row?.sha256;
  }

  recordFileHash(path: string, stamp: FileStamp, sha256: string): void {
    this.write(() =>
      this.sql(
        `INSERT INTO file_hashes (path, size, mtime_ns, ctime_ns, ino, sha256) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
             ctime_ns = excluded.ctime_ns, ino = excluded.ino, sha256 = excluded.sha256`,
      ).run(path, stamp.size, stamp.mtimeNs, stamp.ctimeNs, stamp.ino, sha256),
    );
  }

  findRemote(url: string): { sha256: string; path: string; size: number } | undefined {
    return this.sql("SELECT sha256, path, size FROM remote_files WHERE url = ?").get(url) as
      { sha256: string; path: string; size: number } | undefined;
  }

  recordRemote(url: string, sha256: string, path: string, size: number): void {
    this.write(() =>
      this.sql(
        `INSERT INTO remote_files (url, sha256, path, size) VALUES (?, ?, ?, ?)
           ON CONFLICT (url) DO UPDATE SET sha256 = excluded.sha256, path = excluded.path, size = excluded.size`,
      ).run(url, sha256, path, size),
    );
  }
}

/** A job version's identity in one string (job keys never contain a newline). */
export function versionKey(jobKey: string, specHash: string): string {
  return `${jobKey}\n${specHash}`;
}

const JOB_COLUMNS =
  "id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, result_url, file, error, created_at, submitted_at, running_at, finished_at, downloaded_at, updated_at, out_dir, file_size, file_sha256, file_stamp";

/**
 * A job row as an object of fixed shape. better-sqlite3 builds a row object property by property,
 * which makes a dictionary-mode object of ~1.6 KB for these 26 columns and costs ~20 µs; a run reads
 * a row several times per job, so rows are read as arrays and built here (~250 B, ~5 µs).
 */
function jobRowOf(v: unknown[]): JobRow {
  return {
    id: v[0] as JobRow["id"],
    job_key: v[1] as JobRow["job_key"],
    manifest: v[2] as JobRow["manifest"],
    video_id: v[3] as JobRow["video_id"],
    spec_hash: v[4] as JobRow["spec_hash"],
    spec_json: v[5] as JobRow["spec_json"],
    seconds: v[6] as JobRow["seconds"],
    model: v[7] as JobRow["model"],
    state: v[8] as JobRow["state"],
    fail_kind: v[9] as JobRow["fail_kind"],
    attempts: v[10] as JobRow["attempts"],
    task_id: v[11] as JobRow["task_id"],
    task_status: v[12] as JobRow["task_status"],
    result_url: v[13] as JobRow["result_url"],
    file: v[14] as JobRow["file"],
    error: v[15] as JobRow["error"],
    created_at: v[16] as JobRow["created_at"],
    submitted_at: v[17] as JobRow["submitted_at"],
    running_at: v[18] as JobRow["running_at"],
    finished_at: v[19] as JobRow["finished_at"],
    downloaded_at: v[20] as JobRow["downloaded_at"],
    updated_at: v[21] as JobRow["updated_at"],
    out_dir: v[22] as JobRow["out_dir"],
    file_size: v[23] as JobRow["file_size"],
    file_sha256: v[24] as JobRow["file_sha256"],
    file_stamp: v[25] as JobRow["file_stamp"],
  };
}

/** Whether the database holds no table at all: a file of no bytes, or one created and never written. */
function isEmpty(db: Database.Database): boolean {
  return (db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n === 0;
}

/** Refuses, before SQLite touches it, a file that is not a SQLite database at all. */
function checkHeader(path: string): void {
  if (!existsSync(path)) return;
  const head = Buffer.alloc(16);
  let length = 0;
  try {
    const fd = openSync(path, "r");
    try {
      length = readSync(fd, head, 0, 16, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new StateFileError(`cannot read the state file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (length > 0 && head.toString("latin1", 0, length) !== "SQLite format 3\0") {
    throw new StateFileError(
      `${path} is not a reel state file (not a SQLite database). Point --state at another file, or move this one away.`,
    );
  }
}

function checkOwned(db: Database.Database, path: string): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version === 0) {
    // Empty (a state file reel created but never wrote), or another program's tables.
    const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
      n: number;
    };
    if (tables.n > 0) {
      throw new StateFileError(`${path} is a SQLite database of another program, not a reel state file.`);
    }
    return;
  }
  const app = db.prepare("SELECT value FROM meta WHERE key = 'app'").get() as { value: string } | undefined;
  if (app?.value !== APP_ID) {
    throw new StateFileError(`${path} is a SQLite database of another program, not a reel state file.`);
  }
  if (version > MIGRATIONS.length) {
    throw new StateFileError(
      `${path} was written by a newer reel (schema ${version}, this one knows ${MIGRATIONS.length}). Upgrade reel.`,
    );
  }
}

function migrate(db: Database.Database, path: string): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  checkOwned(db, path);
  for (let i = version; i < MIGRATIONS.length; i++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[i]!);
      if (i === 0) db.prepare("INSERT INTO meta (key, value) VALUES ('app', ?)").run(APP_ID);
      db.pragma(`user_version = ${i + 1}`);
    }).immediate();
  }
}

function ensureService(db: Database.Database, baseUrl: string): number {
  const known = findService(db, baseUrl);
  if (known !== undefined) return known;
  db.prepare("INSERT INTO services (base_url) VALUES (?)").run(baseUrl);
  return findService(db, baseUrl)!;
}

/**
 * The row of this service. Rows are matched by canonical URL, so that a row written by an older
 * reel with another spelling of the address (`HTTPS://Api.example.com/`) is still this service's.
 */
function findService(db: Database.Database, baseUrl: string): number | undefined {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version === 0) return undefined;
  const wanted = canonicalBaseUrl(baseUrl);
  const rows = db.prepare("SELECT id, base_url FROM services ORDER BY id").all() as {
    id: number;
    base_url: string;
  }[];
  return (
    rows.find((row) => row.base_url === baseUrl) ??
    rows.find((row) => canonicalBaseUrl(row.base_url) === wanted)
  )?.id;
}

/** The state file's path with every symlink resolved (its folder's, when the file is not there yet). */
function realStatePath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return join(realpathSync(dirname(path)), basename(path));
  }
}
