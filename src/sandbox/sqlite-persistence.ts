// The persistent sandbox's database: one small SQLite file in the data dir, loaded only when
// `persist` is on (server.ts imports it lazily, so the default sandbox never opens the native module).
//
// Why these settings:
// - journal_mode=WAL, synchronous=NORMAL: a commit is in the WAL file before the call returns, so
//   the death of the process (kill -9) at any moment loses no commit and never corrupts the file;
//   only a power cut could lose the last commits. FULL would add an fsync to every status change
//   of every task, which an emulator on a laptop does not need.
// - locking_mode=EXCLUSIVE: the first write takes the file's lock and keeps it until close, so a
//   second sandbox on the same data dir fails at start instead of handing out the same ids. The OS
//   drops the lock when the process dies, so a restart after kill -9 is never locked out.
// - Each change is one short transaction with no await inside (better-sqlite3 is synchronous),
//   committed before the response that shows it.
// - Ids are stored as decimal text: with `bigIds` they are above 2^53, which a JS number loses.
import Database from "better-sqlite3";
import { UsageError } from "../errors/usage.js";
import { type Migrations, migrate } from "../sqlite/migrate.js";
import type { Id, TaskStatus } from "../service-contract/api-types.js";
import type { MediaFormat } from "../service-contract/media-format.js";
import type {
  AssetOrigin,
  PersistedState,
  SandboxPersistence,
  StoredAsset,
  StoredTask,
} from "./persistence.js";
import type { GenerationPlan } from "./validate-generation.js";

/** Name of the database file inside the data dir. */
export const DATABASE_FILE = "sandbox.db";

// Numbered migrations, applied in the opening transaction by the runner shared with the state file
// (src/sqlite/migrate.ts). Never edit one that has shipped: add the next.
const MIGRATIONS: readonly string[] = [
  // 1: the first schema.
  `
  -- One row: the id sequence and the balance, which outlive every sandbox on this data dir.
  CREATE TABLE account (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    next_id TEXT NOT NULL,
    credits REAL -- NULL: unlimited
  ) STRICT;

  CREATE TABLE assets (
    id TEXT PRIMARY KEY,
    origin TEXT NOT NULL CHECK (origin IN ('upload', 'speech', 'result')),
    format TEXT NOT NULL,
    file_name TEXT, -- under assets/; NULL for result videos, which share the fixture MP4
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    sha256 TEXT,
    token TEXT NOT NULL UNIQUE,
    task_id TEXT,
    deleted INTEGER NOT NULL DEFAULT 0
  ) STRICT;

  -- Times are Date.now() milliseconds; REAL because a run time (seconds x timeScale) has fractions.
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    canonical_body TEXT NOT NULL,
    plan TEXT NOT NULL, -- JSON: model, seconds, source and audio asset ids
    cost REAL NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    preprocessing_ends_at REAL NOT NULL,
    queued_at REAL,
    started_at REAL,
    running_ends_at REAL,
    finished_at REAL,
    fail_reason TEXT,
    result_video_id TEXT
  ) STRICT;
  `,
];

interface AccountRow {
  readonly next_id: string;
  readonly credits: number | null;
}

interface AssetRow {
  readonly id: string;
  readonly origin: AssetOrigin;
  readonly format: MediaFormat;
  readonly file_name: string | null;
  readonly size: number;
  readonly etag: string;
  readonly sha256: string | null;
  readonly token: string;
  readonly task_id: string | null;
  readonly deleted: number;
}

interface TaskRow {
  readonly id: string;
  readonly canonical_body: string;
  readonly plan: string;
  readonly cost: number;
  readonly status: TaskStatus;
  readonly created_at: number;
  readonly preprocessing_ends_at: number;
  readonly queued_at: number | null;
  readonly started_at: number | null;
  readonly running_ends_at: number | null;
  readonly finished_at: number | null;
  readonly fail_reason: string | null;
  readonly result_video_id: string | null;
}

const orNull = <T>(value: T | undefined): T | null => value ?? null;
const orUndefined = <T>(value: T | null): T | undefined => value ?? undefined;

function assetToRow(asset: StoredAsset): AssetRow {
  return {
    id: asset.id,
    origin: asset.origin,
    format: asset.format,
    file_name: orNull(asset.fileName),
    size: asset.size,
    etag: asset.etag,
    sha256: orNull(asset.sha256),
    token: asset.token,
    task_id: orNull(asset.taskId),
    deleted: asset.deleted ? 1 : 0,
  };
}

function rowToAsset(row: AssetRow): StoredAsset {
  return {
    id: row.id,
    origin: row.origin,
    format: row.format,
    fileName: orUndefined(row.file_name),
    size: row.size,
    etag: row.etag,
    sha256: orUndefined(row.sha256),
    token: row.token,
    taskId: orUndefined(row.task_id),
    deleted: row.deleted !== 0,
  };
}

function taskToRow(task: StoredTask): TaskRow {
  return {
    id: task.id,
    canonical_body: task.canonicalBody,
    plan: JSON.stringify(task.plan),
    cost: task.cost,
    status: task.status,
    created_at: task.createdAt,
    preprocessing_ends_at: task.preProcessingEndsAt,
    queued_at: orNull(task.queuedAt),
    started_at: orNull(task.startedAt),
    running_ends_at: orNull(task.runningEndsAt),
    finished_at: orNull(task.finishedAt),
    fail_reason: orNull(task.failReason),
    result_video_id: orNull(task.resultVideoId),
  };
}

function rowToTask(row: TaskRow): StoredTask {
  return {
    id: row.id,
    canonicalBody: row.canonical_body,
    // Written by taskToRow from a GenerationPlan; JSON drops an undefined sourceAssetId, which reads back the same.
    plan: JSON.parse(row.plan) as GenerationPlan,
    cost: row.cost,
    status: row.status,
    createdAt: row.created_at,
    preProcessingEndsAt: row.preprocessing_ends_at,
    queuedAt: orUndefined(row.queued_at),
    startedAt: orUndefined(row.started_at),
    runningEndsAt: orUndefined(row.running_ends_at),
    finishedAt: orUndefined(row.finished_at),
    failReason: orUndefined(row.fail_reason),
    resultVideoId: orUndefined(row.result_video_id),
  };
}

const SQL = {
  insertAccount: "INSERT OR IGNORE INTO account (id, next_id, credits) VALUES (1, ?, ?)",
  selectAccount: "SELECT next_id, credits FROM account WHERE id = 1",
  saveNextId: "UPDATE account SET next_id = ? WHERE id = 1",
  saveCredits: "UPDATE account SET credits = ? WHERE id = 1",
  saveAsset: `INSERT OR REPLACE INTO assets (id, origin, format, file_name, size, etag, sha256, token, task_id, deleted)
    VALUES (@id, @origin, @format, @file_name, @size, @etag, @sha256, @token, @task_id, @deleted)`,
  markAssetDeleted: "UPDATE assets SET deleted = 1 WHERE id = ?",
  selectAssets: "SELECT * FROM assets",
  saveTask: `INSERT OR REPLACE INTO tasks (id, canonical_body, plan, cost, status, created_at, preprocessing_ends_at,
      queued_at, started_at, running_ends_at, finished_at, fail_reason, result_video_id)
    VALUES (@id, @canonical_body, @plan, @cost, @status, @created_at, @preprocessing_ends_at,
      @queued_at, @started_at, @running_ends_at, @finished_at, @fail_reason, @result_video_id)`,
  selectTasks: "SELECT * FROM tasks",
} as const;

/** The sandbox's migrations, for the runner shared with the state file (src/sqlite/migrate.ts). */
function migrationsOf(db: Database.Database): Migrations {
  return {
    list: MIGRATIONS,
    tooNew: (version) =>
      new UsageError(
        `the sandbox database ${db.name} has schema version ${version}, newer than this reel knows (${MIGRATIONS.length}); use the reel that made it or another data dir`,
      ),
  };
}

/** Values for a data dir seen for the first time. */
export interface FreshAccount {
  readonly nextId: bigint;
  readonly credits: number | undefined;
}

function openDatabase(path: string): Database.Database {
  // timeout 0: a data dir locked by a live sandbox fails at once rather than after 5 s of retries.
  const db = new Database(path, { timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function explainOpenError(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new UsageError(`another sandbox is using ${path}; stop it or give this one another data dir`, {
      cause: error,
    });
  }
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
    return new UsageError(`${path} is not a sandbox database`, { cause: error });
  }
  if (typeof code === "string" && /^SQLITE_(READONLY|CANTOPEN|IOERR|PERM)/.test(code)) {
    return new UsageError(
      `cannot write the sandbox's data file ${path} (${code}). Check its folder's permissions, or give the sandbox another data dir.`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Opens (or creates) the database at `path`, takes its lock, and reads what an earlier sandbox left.
 * `fresh` is written only when the file is new.
 */
export function openPersistence(
  path: string,
  fresh: FreshAccount,
): { persistence: SandboxPersistence; state: PersistedState } {
  let db: Database.Database;
  let state: PersistedState;
  try {
    db = openDatabase(path);
  } catch (error) {
    throw explainOpenError(path, error);
  }
  try {
    // IMMEDIATE takes the write lock now, so a second sandbox is refused here and not at its first upload.
    state = db
      .transaction((): PersistedState => {
        migrate(db, migrationsOf(db));
        db.prepare(SQL.insertAccount).run(fresh.nextId.toString(), orNull(fresh.credits));
        const account = db.prepare(SQL.selectAccount).get() as AccountRow;
        return {
          nextId: BigInt(account.next_id),
          credits: orUndefined(account.credits),
          assets: (db.prepare(SQL.selectAssets).all() as AssetRow[]).map(rowToAsset),
          tasks: (db.prepare(SQL.selectTasks).all() as TaskRow[]).map(rowToTask),
        };
      })
      .immediate();
  } catch (error) {
    db.close();
    throw explainOpenError(path, error);
  }

  const statements = {
    saveNextId: db.prepare(SQL.saveNextId),
    saveCredits: db.prepare(SQL.saveCredits),
    saveAsset: db.prepare(SQL.saveAsset),
    markAssetDeleted: db.prepare(SQL.markAssetDeleted),
    saveTask: db.prepare(SQL.saveTask),
  };
  const persistence: SandboxPersistence = {
    atomically: (fn) => (db.inTransaction ? fn() : db.transaction(fn).immediate()),
    saveNextId: (next) => statements.saveNextId.run(next.toString()),
    saveCredits: (balance) => statements.saveCredits.run(orNull(balance)),
    saveAsset: (asset) => statements.saveAsset.run(assetToRow(asset)),
    markAssetDeleted: (id: Id) => statements.markAssetDeleted.run(id),
    saveTask: (task) => statements.saveTask.run(taskToRow(task)),
    close: () => {
      if (db.open) db.close();
    },
  };
  return { persistence, state };
}
