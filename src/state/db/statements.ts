import type Database from "better-sqlite3";

/**
 * The prepared statements of one database, each prepared once per SQL text: preparing costs more
 * than running these small statements, which a run makes several times per job.
 */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** The prepared statement of `text`; `raw`: rows come back as arrays of values (see jobRowOf). */
  get(text: string, raw = false): Database.Statement {
    const key = raw ? `raw:${text}` : text;
    let statement = this.cache.get(key);
    if (!statement) {
      statement = this.db.prepare(text);
      if (raw) statement.raw(true);
      this.cache.set(key, statement);
    }
    return statement;
  }
}
