// What every statement function under pg/sql/ takes, and the helpers they share.
//
// Each write is one statement (its events row included, by a data-modifying WITH), run on the pool
// outside any explicit transaction: PostgreSQL commits it, durably (synchronous_commit, see
// connect.ts), before the promise resolves. A statement is atomic, so a write that fails leaves
// nothing of itself; no write spans two statements but restoreJobs (inTransaction).
import type pg from "pg";
import { committedOn, eventWriteComing } from "../event-commits.js";

export interface PgContext {
  readonly pool: pg.Pool;
  /** The service the rows belong to: -1 for every service (a reader), 0 for one the store does not know. */
  readonly serviceId: number;
  /** The machine whose caches are read and written (paths mean nothing on another). */
  readonly host: string;
  readonly now: () => number;
  /** The writer's runner, which the events of its writes name (src/events); undefined for a reader. */
  readonly eventRunnerId?: number;
}

// pg hands bigint columns back as strings: read them with these.
export { toNumber, toNumberOrNull } from "../../stored-number.js";

/** This process as the events it writes name it ("host:pid"), where no runner does (a reviewer's). */
export function processName(c: Pick<PgContext, "host">): string {
  return `${c.host}:${process.pid}`;
}

/**
 * Runs `fn` in one transaction on one client: committed whole, or rolled back whole. With `unless`,
 * asked first on that client outside the transaction: when it says true, nothing more is done
 * (undefined).
 */
export async function inTransaction<T>(
  c: Pick<PgContext, "pool">,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T>;
export async function inTransaction<T>(
  c: Pick<PgContext, "pool">,
  fn: (client: pg.PoolClient) => Promise<T>,
  unless: (client: pg.PoolClient) => Promise<boolean>,
): Promise<T | undefined>;
export async function inTransaction<T>(
  c: Pick<PgContext, "pool">,
  fn: (client: pg.PoolClient) => Promise<T>,
  unless?: (client: pg.PoolClient) => Promise<boolean>,
): Promise<T | undefined> {
  // Its connection breaking is heard by the listener every client of the store's pool has
  // (connect.ts): the failed query rejects, which is what counts.
  eventWriteComing(c.pool);
  const client = await c.pool.connect();
  try {
    if (unless && (await unless(client))) return undefined;
    await client.query("BEGIN");
    try {
      const result = await fn(client);
      await client.query("COMMIT");
      committedOn(c.pool);
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}
