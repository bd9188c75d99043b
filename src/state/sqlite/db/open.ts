// Opening the state file: checked before SQLite touches it, locked, checked whole, migrated, and
// every SQLite failure turned into a message that names the file and the fix.
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import type Database from "better-sqlite3";
import { ReelError } from "../../../errors/reel-error.js";
import { migrate } from "../../../sqlite/migrate.js";
import { StateFileError } from "../../../errors/state.js";
import type { ExclusiveAddress } from "../../service-address.js";
import { checkHeader, checkOwned, isEmpty, stateMigrations } from "./checks.js";
import { acquireLock, type StateLock } from "./lock.js";
import { ensureService, findService } from "./services.js";

export interface OpenStateOptions {
  /**
   * Service the rows belong to: asset and task ids are only meaningful on their own service.
   * Read-only users may leave it out to read every service's jobs (`listLatestJobs`).
   */
  readonly baseUrl?: string;
  /** Read-only use (plan, status): no lock, no migration, no service row created. */
  readonly readonly?: boolean;
  /**
   * Deciding and retaking (reel approve, the review page) beside a run or watch that holds the file:
   * writes without taking its lock (see docs/review.md). The file must exist, and know `baseUrl`'s
   * service: nothing is created but the tables of this reel's migrations.
   */
  readonly review?: boolean;
  /**
   * Setting named budgets (reel budget set) beside a run or watch that may hold the file: writes
   * without taking its lock, as a reviewer does, and needs no service (budgets are not scoped by
   * one). A file not there yet is created, under the lock while it is.
   */
  readonly budgets?: boolean;
  readonly now?: () => number;
  /**
   * Called, with the file locked and before any table is created, when the state holds nothing:
   * "missing" (no file was there) or "empty" (a file of no bytes, or with no tables). A reel state
   * file is never empty once opened, so an empty one beside earlier work is a state file lost (an
   * emptied file, a deleted WAL): the caller may throw to refuse it, before anything is paid again.
   */
  readonly whenNew?: (how: "missing" | "empty") => void;
  /** A writer that must be its service's only address in use (see service-address.ts). */
  readonly exclusiveAddress?: ExclusiveAddress;
}

export interface OpenedState {
  readonly db: Database.Database;
  /** Held by a writer until it closes; none for a reader. */
  readonly lock: StateLock | undefined;
  /** The row id of the service (-1: none given, every service; 0: a service the file does not know). */
  readonly serviceId: number;
}

// Required on the first open, not at load: a run on a PostgreSQL store opens no state file, and
// the driver is a few per cent of a runner's start (the same module `import` would give).
const require = createRequire(import.meta.url);
const sqliteDriver = (): typeof Database => require("better-sqlite3") as typeof Database;

export function openStateDatabase(path: string, options: OpenStateOptions): OpenedState {
  // Before the lock and outside the try below: a driver that fails to load is not the file's fault.
  const Driver = sqliteDriver();
  const readonly = options.readonly ?? false;
  const review = !readonly && options.review === true;
  if ((readonly || review) && !existsSync(path)) {
    throw new StateFileError(`no state file at ${path}`);
  }
  if (!readonly) mkdirSync(dirname(path), { recursive: true });
  checkHeader(path);
  const existed = existsSync(path);
  const budgets = !readonly && !review && options.budgets === true;
  // A lock on the file itself (see lock.ts): every link to it, from any process, meets it. A
  // reviewer takes none: the lock keeps a second payer out, and a reviewer pays for nothing; nor
  // does a budget's writer once the file is there (it pays for nothing either).
  const lock = readonly || review || (budgets && existed) ? undefined : acquireLock(realStatePath(path));
  let db: Database.Database | undefined;
  try {
    db = new Driver(path, { readonly, fileMustExist: readonly || review });
    // A reviewer's write waits for the turn a runner is committing (milliseconds), and a runner's
    // for a reviewer's (a few rows): see docs/review.md.
    db.pragma("busy_timeout = 5000");
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") {
      throw new StateFileError(
        `the state file ${path} is damaged (${String(check)}). It is the record of the credits spent, so reel does not recreate it: keep a copy, then move it away to start afresh (jobs already submitted would then be submitted again).`,
      );
    }
    if (review && isEmpty(db)) throw new StateFileError(`the state file ${path} holds nothing yet`);
    if (!readonly) {
      if (options.whenNew && isEmpty(db)) options.whenNew(existed ? "empty" : "missing");
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      checkOwned(db, path);
      migrate(db, stateMigrations(path));
    } else {
      checkOwned(db, path);
    }
    db.pragma("foreign_keys = ON");
    if (!readonly && !budgets && options.baseUrl === undefined)
      throw new TypeError("baseUrl is required to write");
    const serviceId =
      options.baseUrl === undefined
        ? -1
        : readonly || review
          ? (findService(db, options.baseUrl) ?? 0) // 0 matches no row: that service has none
          : ensureService(db, options.baseUrl, options.exclusiveAddress);
    if (review && serviceId === 0) {
      throw new StateFileError(`the state file ${path} has no jobs of ${options.baseUrl}`);
    }
    return { db, lock, serviceId };
  } catch (error) {
    db?.close();
    lock?.release();
    throw explainOpenError(path, readonly, error);
  }
}

/** The error to throw for `error`, met while opening the state file. */
function explainOpenError(path: string, readonly: boolean, error: unknown): unknown {
  if (error instanceof ReelError) return error;
  const code = (error as { code?: string }).code;
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
    return new StateFileError(`${path} is not a reel state file or is damaged (${code}).`, {
      cause: error,
    });
  }
  // Read-only file or folder, no permission, a folder in its place...
  if (
    code?.startsWith("SQLITE_READONLY") ||
    code?.startsWith("SQLITE_CANTOPEN") ||
    code?.startsWith("SQLITE_IOERR")
  ) {
    return new StateFileError(
      `cannot ${readonly ? "read" : "write"} the state file ${path} (${code}: ${(error as Error).message}). Check its permissions and its folder's, or point --state at another file.`,
      { cause: error },
    );
  }
  return error;
}

/** The state file's path with every symlink resolved (its folder's, when the file is not there yet). */
export function realStatePath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return join(realpathSync(dirname(path)), basename(path));
  }
}
