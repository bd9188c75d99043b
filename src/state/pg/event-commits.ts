// When this process's writes committed events: a follower of a writer's own events
// (PgStore.followOwnEvents) reads them back then, not on a clock, so a runner that writes nothing
// reads nothing. Every statement that records events inserts into `events` (sql/): one alone is
// committed when its promise resolves; one in a transaction, with the transaction (inTransaction
// tells). A statement spelled otherwise would be read back by the follower's slower fallback.
import type pg from "pg";

const RECORDS_EVENTS = /\bINSERT INTO events\b/;

const wakes = new WeakMap<object, Set<() => void>>();

/** Calls `wake` after each commit on `pool` that may have recorded events; returns the stop. */
export function onEventCommits(pool: pg.Pool, wake: () => void): () => void {
  let set = wakes.get(pool);
  if (!set) {
    set = new Set();
    wakes.set(pool, set);
    watchStatements(pool);
  }
  set.add(wake);
  return () => void set.delete(wake);
}

/** A transaction on `pool` committed: what it recorded is there to read. */
export function committedOn(pool: object): void {
  for (const wake of wakes.get(pool) ?? []) wake();
}

/** The pool's one-statement queries (the writer's every write but a transaction's), watched. */
function watchStatements(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    const result = query(...args);
    const first = args[0];
    const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text;
    if (result instanceof Promise && typeof text === "string" && RECORDS_EVENTS.test(text))
      result.then(
        () => committedOn(pool),
        () => {},
      );
    return result;
  };
}
