// The group commit of the state file: how its writes reach the disk.
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
// - A commit that fails, or a WAL deleted under the process, breaks the store (see commitOrBreak).
import { statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { Statements } from "./db/statements.js";
import { StateFileError } from "../../errors/state.js";

export class Turn {
  /** Savepoint nesting of the write in progress. */
  private depth = 0;
  private commitScheduled = false;
  /** Whether the turn's transaction commits with synchronous=FULL. */
  private fullTurn = false;
  /** Intents waiting for the turn's transaction to reach the disk. */
  private durableWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  /** Set when a commit failed: the store refuses further writes. */
  private failure: StateFileError | undefined;
  /** The turn's events as [at, job id, kind, detail, job key], inserted with its COMMIT (see `event`). */
  private events: (string | number | null)[][] = [];
  /** The inode of the WAL file once seen (see checkWal). */
  private walIno: number | undefined;

  /**
   * `path`: the state file, for messages. `walPath`: the WAL file SQLite writes to, watched when
   * `writer`.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly sql: Statements,
    private readonly now: () => number,
    private readonly path: string,
    private readonly walPath: string,
    writer: boolean,
    /** The process, as the events it records name it ("host:pid"). */
    private readonly runner = "",
  ) {
    if (writer) this.walIno = statSync(walPath, { throwIfNoEntry: false })?.ino;
  }

  /** Why the state file can no longer be written, once a commit failed. */
  get writeFailure(): StateFileError | undefined {
    return this.failure;
  }

  /**
   * Runs `fn` inside the current turn's transaction (opened here if none is), as one savepoint: if
   * `fn` throws, its own changes and events are undone and the turn's other writes stay. Nested
   * calls join. `durable`: this turn commits with synchronous=FULL (see `durable()`).
   */
  write<T>(fn: () => T, durable = false, savepoint = true): T {
    if (this.failure) throw this.failure;
    if (this.depth > 0) return fn();
    if (durable && !this.fullTurn) {
      // SQLite changes the safety level only between transactions: commit what the turn wrote so
      // far as it was, and go on in a FULL transaction.
      if (this.db.inTransaction) this.commitOrBreak();
      this.sql.get("PRAGMA synchronous = FULL").run();
      this.fullTurn = true;
    }
    if (!this.db.inTransaction) {
      this.sql.get("BEGIN IMMEDIATE").run();
      if (!this.commitScheduled) {
        this.commitScheduled = true;
        setImmediate(() => this.commit());
      }
    }
    if (savepoint) this.sql.get("SAVEPOINT w").run();
    const eventsBefore = this.events.length;
    this.depth++;
    try {
      const result = fn();
      if (savepoint) this.sql.get("RELEASE w").run();
      return result;
    } catch (error) {
      this.events.length = eventsBefore;
      if (this.db.inTransaction) {
        if (savepoint) {
          this.sql.get("ROLLBACK TO w").run();
          this.sql.get("RELEASE w").run();
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
  writeStatement<T>(fn: () => T, durable = false): T {
    return this.write(fn, durable, false);
  }

  /**
   * Records an event of the write in progress; the turn's events are inserted with its COMMIT, with
   * the job's key and task id as they are then (`jobKey` names a job whose row is gone by then).
   */
  event(jobId: number | null, kind: string, detail?: string, jobKey?: string): void {
    this.events.push([this.now(), jobId, kind, detail ?? null, jobKey ?? null]);
  }

  /**
   * Records an event that is no state change (a run started, a job queued): committed with the
   * turn's writes, or alone at the end of the turn. Never throws: a store that can no longer be
   * written loses it, and says so at its next write.
   */
  note(kind: string, detail: string | null, jobKey: string | null): void {
    if (this.failure) return;
    try {
      this.write(() => this.events.push([this.now(), null, kind, detail, jobKey]), false, false);
    } catch {
      // The store is broken (writeFailure): every later write says so.
    }
  }

  /** Resolves once this turn's writes are on disk (fsync'ed): for intents that precede a costed call. */
  durable(): Promise<void> {
    if (!this.db.inTransaction) return Promise.resolve(); // committed already (by close or flush)
    return new Promise((resolve, reject) => this.durableWaiters.push({ resolve, reject }));
  }

  /**
   * `write`'s result once its turn is committed, also when it failed (its turn ends then, rather
   * than holding the file's write lock until the event loop comes round).
   */
  async committed<T>(write: () => T): Promise<T> {
    let result: T;
    try {
      result = write();
    } catch (error) {
      await this.durable().catch(() => {});
      throw error;
    }
    await this.durable();
    return result;
  }

  /** Commits now what this turn wrote (before closing, and before the process exits). */
  flush(): void {
    if (!this.db.open) return;
    try {
      this.commit();
    } catch {
      // Already recorded as `writeFailure`; closing must still release the file and its lock.
    }
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
        this.sql.get("PRAGMA synchronous = NORMAL").run();
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
        this.sql
          .get(
            `INSERT INTO events (at, job_id, kind, detail, job_key, task_id, runner)
               SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, coalesce(value ->> 4, j.job_key), j.task_id, ?
                 FROM json_each(?) LEFT JOIN jobs j ON j.id = value ->> 1 ORDER BY json_each.key`,
          )
          .run(this.runner, JSON.stringify(events));
      }
      this.sql.get("COMMIT").run();
    } catch (error) {
      const failure = this.breakStore(error);
      if (this.db.inTransaction) this.sql.get("ROLLBACK").run();
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
}
