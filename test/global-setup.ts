// Before any test file: a dist/ built from the current src/ (the tests that spawn bin/reel.js run
// it), and a PostgreSQL server for the store tests. Tests get its URL by inject("pgUrl"); undefined
// when none can be reached, and then they skip with a line saying how to enable them, except in CI,
// where they must run (test/helpers/postgres.ts fails them instead).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { openPool } from "../src/state/pg/connect.js";
import { migratePg } from "../src/state/pg/migrate.js";
import { PG_MIGRATIONS } from "../src/state/pg/migrations.js";
import { ensureFreshBundle, ensureFreshDist } from "./dist-freshness.js";
import { databaseUrl, readTemplateState, type TemplateState } from "./helpers/pg-reset.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string | undefined;
    pgWhy: string;
    /** A database at reel's current schema that each test's database is copied from (see below). */
    pgTemplate: string | undefined;
    /** What a database at the template's state holds: a used one is reset to it (helpers/pg-reset.ts). */
    pgTemplateState: TemplateState | undefined;
  }
}

/** The admin URL the tests use: REEL_TEST_PG_URL, else the role scripts/postgres-for-tests.sh makes. */
const ADMIN_URL = process.env.REEL_TEST_PG_URL ?? "postgres://reel_test:reel_test@127.0.0.1:5432/postgres";
const SCRIPT = fileURLToPath(new URL("../scripts/postgres-for-tests.sh", import.meta.url));

async function reachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Starts an installed PostgreSQL (as root) with the project's own script. Installing it is .ci/run's
 * work: a developer's test run never calls apt-get. Returns undefined when the script succeeded, else
 * what it said.
 */
export function startInstalledPostgres(env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    execFileSync("bash", [SCRIPT, "--no-install"], { stdio: "pipe", timeout: 60_000, env });
    return undefined;
  } catch (error) {
    const { stdout, message } = error as { stdout?: Buffer; message: string };
    return stdout?.toString().trim().split("\n").at(-1) || message;
  }
}

/**
 * A database migrated once by reel's own migrations, for this run of the suite alone (its name is
 * its own: other runs may share the server). A test's database is a copy of it (CREATE DATABASE
 * ... TEMPLATE: half the time of an empty one, and no migrations to run): a store as a runner
 * leaves it, which every test but the migrations' own starts from. Dropped after the run.
 */
async function makeTemplate(
  adminUrl: string,
): Promise<{ name: string; state: TemplateState; drop: () => Promise<void> }> {
  const run = randomBytes(6).toString("hex");
  const name = `reel_tpl_${run}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const pool = await openPool(databaseUrl(adminUrl, name));
  try {
    await migratePg(pool, PG_MIGRATIONS);
  } finally {
    await pool.end();
  }
  const state = await readTemplateState(databaseUrl(adminUrl, name));
  return {
    name,
    state,
    // The template, and the tests' databases the workers kept for their next tests (named after it).
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ datname: string }>(
          "SELECT datname FROM pg_database WHERE datname LIKE $1",
          [`reel\\_t\\_${run}\\_%`],
        );
        for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  await ensureFreshDist();
  await ensureFreshBundle();
  let why = await reachable();
  if (why !== undefined && process.getuid?.() === 0 && process.env.REEL_TEST_PG_URL === undefined) {
    const scriptSaid = startInstalledPostgres();
    why = await reachable();
    if (why !== undefined && scriptSaid !== undefined) why += `; ${scriptSaid}`;
  }
  project.provide("pgUrl", why === undefined ? ADMIN_URL : undefined);
  project.provide(
    "pgWhy",
    why === undefined
      ? ""
      : `no PostgreSQL at ${ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} (${why}); run scripts/postgres-for-tests.sh as root, or set REEL_TEST_PG_URL`,
  );
  const template = why === undefined ? await makeTemplate(ADMIN_URL) : undefined;
  project.provide("pgTemplate", template?.name);
  project.provide("pgTemplateState", template?.state);
  return template?.drop;
}
