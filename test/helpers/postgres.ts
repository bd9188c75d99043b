// A fresh PostgreSQL database per test, dropped after it (graphile-worker's habit), on the server
// test/global-setup.ts found. Where none is reachable the test is skipped with one line saying how
// to enable it, except in CI (CI=true), where a PostgreSQL test must run: it fails instead.
// The database is at reel's current schema (copied from the global setup's migrated template, as a
// runner that started on it before leaves it), or empty where a test asks (the migrations' own).
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, inject, type TestContext } from "vitest";

export interface DatabaseOptions {
  /** An empty database, not even reel's schema in it: for the tests of the migrations themselves. */
  readonly empty?: boolean;
}

export function usePostgres(): (context?: TestContext, options?: DatabaseOptions) => Promise<string> {
  const made: string[] = [];
  // A test's databases are dropped while the next test runs (a drop takes a fraction of a second,
  // more on a busy server, and nothing of the next test uses them): every session in them is ended
  // by the drop itself (WITH FORCE). The file ends once all are dropped, failing if one was not.
  const dropping: Promise<unknown>[] = [];
  afterEach(() => {
    const url = inject("pgUrl");
    if (!url || made.length === 0) return;
    const names = made.splice(0);
    const drop = (async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        for (const name of names) await dropDatabase(admin, name);
      } finally {
        await admin.end();
      }
    })();
    drop.catch(() => {}); // awaited (and its failure thrown) in afterAll
    dropping.push(drop);
  });
  afterAll(async () => {
    await Promise.all(dropping.splice(0));
  });
  /**
   * The URL of a new database of this test, at reel's current schema unless `options.empty` (skipping
   * the test when there is no server). Without `context` (a shared suite's test, see
   * pg.conformance.test.ts) it throws instead: skip that suite by `hasPostgres()`.
   */
  return async (context, options = {}) => {
    const url = inject("pgUrl");
    if (!url) {
      const why = inject("pgWhy");
      if (process.env.CI) throw new Error(`PostgreSQL tests must run in CI: ${why}`);
      if (!context) throw new Error(`no PostgreSQL: ${why}`);
      console.warn(`skipped: ${why}`);
      context.skip();
      throw new Error("unreachable");
    }
    const name = `reel_t_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const template = options.empty ? undefined : inject("pgTemplate");
      await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
    } finally {
      await admin.end();
    }
    made.push(name);
    const dbUrl = new URL(url);
    dbUrl.pathname = `/${name}`;
    return dbUrl.toString();
  };
}

/**
 * Whether the PostgreSQL tests run: a server was found, or this is CI (where they must, and fail
 * without one). Else says once how to enable them.
 */
export function hasPostgres(): boolean {
  if (inject("pgUrl") || process.env.CI) return true;
  console.warn(`skipped: ${inject("pgWhy")}`);
  return false;
}

/**
 * Drops a test's database, ending what is still connected to it. A process that cannot be ended (an
 * autovacuum worker, where the role lacks pg_signal_backend) ends by itself in a moment: tried again.
 */
async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      return;
    } catch (error) {
      if (attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
