// The one migration runner of reel's SQLite files: the state file (src/state/sqlite/migrations.ts) and the
// persistent sandbox's database (src/sandbox/sqlite-persistence.ts), each with its own list.
// Migrations are numbered by their place in the list; `PRAGMA user_version` records how far a file
// has come. Never edit a migration that has shipped: add the next.
import type Database from "better-sqlite3";

export interface Migrations {
  /** `list[i]` takes a file from schema version i to i + 1. */
  readonly list: readonly string[];
  /** Runs in the transaction of the migration to `version`, after its SQL (to stamp a new file). */
  readonly after?: (db: Database.Database, version: number) => void;
  /** The error for a file of a newer schema than `list` knows: a newer program wrote it. */
  readonly tooNew: (version: number) => Error;
}

/** The schema version of `db`: 0 for a file no migration has touched. */
export function schemaVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Brings `db` to the last version of `migrations`. Each migration is one IMMEDIATE transaction (a
 * savepoint inside a transaction the caller holds): a file is always at a version that applied whole.
 */
export function migrate(db: Database.Database, migrations: Migrations): void {
  const version = schemaVersion(db);
  if (version > migrations.list.length) throw migrations.tooNew(version);
  for (let i = version; i < migrations.list.length; i++) {
    db.transaction(() => {
      db.exec(migrations.list[i]!);
      migrations.after?.(db, i + 1);
      db.pragma(`user_version = ${i + 1}`);
    }).immediate();
  }
}
