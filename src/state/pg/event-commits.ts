// When this process's writes committed events: a follower of a writer's own events
// (PgStore.followOwnEvents) reads them back then, not on a clock, so a runner that writes nothing
// reads nothing. Every statement that records events inserts into `events` (sql/): one alone is
// committed when its promise resolves; one in a transaction, with the transaction (inTransaction
// tells). A statement spelled otherwise would be read back by the follower's slower fallback.
// The same statements are where a writer's pending notes are issued first (beforeEventWrites), so
// that the events are stored in the order they happened.
import type pg from "pg";

const RECORDS_EVENTS = /\bINSERT INTO events\b/;

const wakes = new WeakMap<object, Set<() => void>>();
const befores = new WeakMap<object, () => void>();
const watched = new WeakSet<object>();

/** Calls `wake` after each commit on `pool` that may have recorded events; returns the stop. */
export function onEventCommits(pool: pg.Pool, wake: () => void): () => void {
  watchStatements(pool);
  let set = wakes.get(pool);
  if (!set) {
    set = new Set();
    wakes.set(pool, set);
  }
  set.add(wake);
  return () => void set.delete(wake);
}

/**
 * Calls `issue` synchronously before each statement or transaction on `pool` that may record events
 * is issued: what `issue` queries on the pool then runs first (a writer's pool has one connection,
 * and pg's pool hands it out in the order asked). One per pool.
 */
export function beforeEventWrites(pool: pg.Pool, issue: () => void): void {
  watchStatements(pool);
  befores.set(pool, issue);
}

/** A transaction on `pool` is about to be asked for (see beforeEventWrites). */
export function eventWriteComing(pool: object): void {
  befores.get(pool)?.();
}

/** A transaction on `pool` committed: what it recorded is there to read. */
export function committedOn(pool: object): void {
  for (const wake of wakes.get(pool) ?? []) wake();
}

/** The pool's one-statement queries (the writer's every write but a transaction's), watched. */
function watchStatements(pool: pg.Pool): void {
  if (watched.has(pool)) return;
  watched.add(pool);
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    const first = args[0];
    const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text;
    const records = typeof text === "string" && RECORDS_EVENTS.test(text);
    if (records) eventWriteComing(pool);
    const result = query(...args);
    if (result instanceof Promise && records)
      result.then(
        () => committedOn(pool),
        () => {},
      );
    return result;
  };
}
