// Numbered migrations of the PostgreSQL store, each in its own transaction, serialized across every
// runner that starts at the same moment by a session advisory lock (the second starter waits, then
// finds the schema current). `reel_schema` records each version applied; a database at a version
// this reel does not know was migrated by a newer reel, and is refused as SQLite's file is.
// Never edit a migration that has landed: add the next.
import type pg from "pg";

export interface PgMigrations {
  /** `list[i]` takes the database from version i to i + 1. */
  readonly list: readonly string[];
  /** The error for a database of a newer schema than `list` knows. */
  readonly tooNew: (version: number) => Error;
}

/** The advisory lock key of reel's migrations (any constant; "reel" in ASCII). */
const MIGRATION_LOCK = 0x7265656c;

/**
 * Brings the database of `pool` (from openPool) to the last version of `migrations`; returns the
 * version found. Safe to run again after a failure (a broken connection): what was applied is
 * recorded, and the lock went with the session.
 */
export async function migratePg(pool: pg.Pool, migrations: PgMigrations): Promise<number> {
  // Every runner starts here, and the schema is nearly always current: one statement, no lock
  // (each version is recorded in the transaction that applied it, so the last one read is whole).
  const current = await currentVersionOf(pool);
  if (current !== undefined && current > migrations.list.length) throw migrations.tooNew(current);
  if (current === migrations.list.length) return current;
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS reel_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const found = await schemaVersionOf(client);
      if (found > migrations.list.length) throw migrations.tooNew(found);
      for (let version = found; version < migrations.list.length; version++) {
        await client.query("BEGIN");
        try {
          await client.query(migrations.list[version]!);
          await client.query("INSERT INTO reel_schema (version) VALUES ($1)", [version + 1]);
          await client.query("COMMIT");
        } catch (error) {
          // On a broken connection this fails too: the error that counts is the first.
          await client.query("ROLLBACK").catch(() => {});
          throw error;
        }
      }
      return found;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch((error: Error) => {
        failure ??= error;
      });
    }
  } catch (error) {
    failure ??= error as Error;
    throw error;
  } finally {
    // After a failure the connection is closed rather than pooled: it could still hold the lock
    // (an unlock that failed) and would keep every other runner from starting.
    client.release(failure);
  }
}

/** The version of the database (0: no migration applied). */
export async function schemaVersionOf(client: pg.ClientBase | pg.Pool): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>(
    "SELECT max(version) AS version FROM reel_schema",
  );
  return rows[0]?.version ?? 0;
}

/** The version of the database, or undefined when it has no `reel_schema` table yet. */
async function currentVersionOf(pool: pg.Pool): Promise<number | undefined> {
  try {
    return await schemaVersionOf(pool);
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return undefined;
    throw error;
  }
}

/** PostgreSQL's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = "42P01";
