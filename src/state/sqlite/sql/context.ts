import type Database from "better-sqlite3";
import type { Statements } from "../db/statements.js";
import type { Turn } from "../turn.js";

/** What every statement function under sql/ takes: one store's database, statements, turn and scope. */
export interface SqlContext {
  readonly db: Database.Database;
  readonly statements: Statements;
  /** Writes go through it (see turn.ts): `write` for several statements, `writeStatement` for one. */
  readonly turn: Turn;
  /** The service the rows belong to: -1 for every service (a reader), 0 for one the file does not know. */
  readonly serviceId: number;
  readonly now: () => number;
}

/** The prepared statement of `text` (see Statements). */
export function sql(c: SqlContext, text: string, raw = false): Database.Statement {
  return c.statements.get(text, raw);
}

/**
 * The interface's methods over `c`: `on(fn)` runs `fn` on `c` when called (its statements then, as
 * every method of the state file's runs them) and hands back its result, or its throw, as a promise.
 */
export function methodsOn(c: SqlContext) {
  return <A extends unknown[], R>(fn: (c: SqlContext, ...args: A) => R) =>
    async (...args: A): Promise<Awaited<R>> =>
      await fn(c, ...args);
}
