// What a file must be before reel writes it as its state file: a SQLite database (checked before
// SQLite touches it), and reel's own, of a schema this reel knows.
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import type Database from "better-sqlite3";
import type { Migrations } from "../../../sqlite/migrate.js";
import { schemaVersion } from "../../../sqlite/migrate.js";
import { StateFileError } from "../../../errors/state.js";
import { MIGRATIONS } from "../migrations.js";

/** Written in the `meta` table of every reel state file, by its first migration. */
const APP_ID = "reel-state";

/** The state file's migrations, for the shared runner (src/sqlite/migrate.ts). */
export function stateMigrations(path: string): Migrations {
  return {
    list: MIGRATIONS,
    after: (db, version) => {
      if (version === 1) db.prepare("INSERT INTO meta (key, value) VALUES ('app', ?)").run(APP_ID);
    },
    tooNew: (version) => tooNewError(path, version),
  };
}

function tooNewError(path: string, version: number): StateFileError {
  return new StateFileError(
    `${path} was written by a newer reel (schema ${version}, this one knows ${MIGRATIONS.length}). Upgrade reel.`,
  );
}

/** Whether the database holds no table at all: a file of no bytes, or one created and never written. */
export function isEmpty(db: Database.Database): boolean {
  return (db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n === 0;
}

/** Refuses, before SQLite touches it, a file that is not a SQLite database at all. */
export function checkHeader(path: string): void {
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

/** Refuses another program's SQLite database, and a state file of a newer reel. */
export function checkOwned(db: Database.Database, path: string): void {
  const version = schemaVersion(db);
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
  if (version > MIGRATIONS.length) throw tooNewError(path, version);
}
