// Before any test file: a PostgreSQL server for the store tests (issue 18). Tests get its URL by
// inject("pgUrl"); undefined when none can be reached, and then they skip with a line saying how to
// enable them, except in CI, where they must run (test/helpers/postgres.ts fails them instead).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string | undefined;
    pgWhy: string;
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

export default async function setup(project: TestProject): Promise<void> {
  let why = await reachable();
  // As root (CI, a fresh machine), the project's own script installs and starts the server.
  if (why !== undefined && process.getuid?.() === 0 && process.env.REEL_TEST_PG_URL === undefined) {
    try {
      execFileSync("bash", [SCRIPT], { stdio: "ignore", timeout: 300_000 });
    } catch {
      // said below, through `why`
    }
    why = await reachable();
  }
  project.provide("pgUrl", why === undefined ? ADMIN_URL : undefined);
  project.provide(
    "pgWhy",
    why === undefined
      ? ""
      : `no PostgreSQL at ${ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} (${why}); run scripts/postgres-for-tests.sh as root, or set REEL_TEST_PG_URL`,
  );
}
