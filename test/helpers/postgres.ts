// A fresh PostgreSQL database per test (graphile-worker's habit), on the server
// test/global-setup.ts found. Where none is reachable the test is skipped with one line saying how
// to enable it, except in CI (CI=true), where a PostgreSQL test must run: it fails instead.
// The database is at reel's current schema (copied from the global setup's migrated template, as a
// runner that started on it before leaves it), or empty where a test asks (the migrations' own).
// A database at the schema is used again by a later test of the worker once its test ended,
// renamed and emptied back to the template's state (helpers/pg-reset.ts); any other is dropped.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, inject, type TestContext } from "vitest";
import { resetDatabase } from "./pg-reset.js";

export interface DatabaseOptions {
  /** An empty database, not even reel's schema in it: for the tests of the migrations themselves. */
  readonly empty?: boolean;
}

/**
 * Databases at the template's state no test holds, for the next test of this worker (test files share
 * this module: vitest.config.ts, isolate false). The global setup drops those left at the end.
 */
const spare: string[] = [];
/** Resets and drops under way: a test's database is given back while the next test starts. */
let settling: Promise<unknown> = Promise.resolve();

/** A new database name of this run of the suite (the global teardown drops what is left by it). */
function newName(): string {
  const run = inject("pgTemplate")?.replace(/^reel_tpl_/, "") ?? "x";
  return `reel_t_${run}_${randomBytes(6).toString("hex")}`;
}

export function usePostgres(): (context?: TestContext, options?: DatabaseOptions) => Promise<string> {
  const made: { name: string; empty: boolean }[] = [];
  // A test's databases are reset (or dropped) while the next test runs: every session in them is
  // ended first. The file ends once all are, failing if one could not be dropped.
  const dropping: Promise<unknown>[] = [];
  afterEach(() => {
    const url = inject("pgUrl");
    if (!url || made.length === 0) return;
    const used = made.splice(0);
    const template = inject("pgTemplateState");
    const settle = (async () => {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        for (const { name, empty } of used) {
          const outcome =
            empty || !template
              ? { reset: false, name }
              : await resetDatabase(admin, url, name, newName(), template);
          if (outcome.reset) spare.push(outcome.name);
          else await dropDatabase(admin, outcome.name);
        }
      } finally {
        await admin.end();
      }
    })();
    settle.catch(() => {}); // awaited (and its failure thrown) in afterAll
    dropping.push(settle);
    settling = Promise.allSettled([settling, settle]);
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
    const empty = options.empty === true;
    await settling;
    let name = empty ? undefined : spare.pop();
    if (name === undefined) {
      name = newName();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const template = empty ? undefined : inject("pgTemplate");
        await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
      } finally {
        await admin.end();
      }
    }
    made.push({ name, empty });
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
