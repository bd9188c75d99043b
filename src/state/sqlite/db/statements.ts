import type Database from "better-sqlite3";

/**
 * The prepared statements of one database, each prepared once per SQL text: preparing costs more
 * than running these small statements, which a run makes several times per job.
 */
export class Statements {
  // Two maps rather than one keyed by a built string: this runs several times per job.
  private readonly objects = new Map<string, Database.Statement>();
  private readonly arrays = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** The prepared statement of `text`; `raw`: rows come back as arrays of values (see jobRowOf). */
  get(text: string, raw = false): Database.Statement {
    const cache = raw ? this.arrays : this.objects;
    let statement = cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      if (raw) statement.raw(true);
      cache.set(text, statement);
    }
    return statement;
  }
}
