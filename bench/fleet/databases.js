// The fleet bench's PostgreSQL: a database per round (empty, or a copy of a store a build migrated
// before), all dropped at the end, and the server's statistics the figures read.
import { spawn } from "node:child_process";
import pg from "pg";
import { ADMIN_URL, RUN_TAG, runnerEnv } from "./settings.js";

export async function adminQuery(sql, params = [], url = ADMIN_URL) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => {});
  }
}

export const databases = [];

/**
 * A fresh database for one round: its name and URL. With `template`, a copy of that database (a
 * store already migrated, as a fleet's runners find it), else empty (its first runner migrates it).
 */
export async function newDatabase(template) {
  const name = `reel_bench_${RUN_TAG}_${databases.length}`;
  await adminQuery(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  databases.push(name);
  // Calls of reel's plpgsql functions counted in it (claimCounts); a role not granted the setting
  // (scripts/postgres-for-tests.sh grants it) leaves them uncounted.
  await adminQuery(`ALTER DATABASE ${name} SET track_functions = 'pl'`).catch(() => {});
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export const templates = new Map(); // bin -> { name, newMs, migratedMs }

/**
 * The store a round of `bin`'s runners joins: a team's store exists before its runners start, and
 * is migrated once in its life, so each round gets a copy of a database `bin`'s reel has migrated
 * (its own schema: a baseline of another version migrates its own). BENCH_FLEET_NEW_STORE=1: an
 * empty database instead, migrated by the round's first runner while the others wait.
 */
export async function storeFor(bin) {
  if (process.env.BENCH_FLEET_NEW_STORE === "1") return newDatabase();
  if (!templates.has(bin)) {
    const db = await newDatabase();
    // `reel budget show` opens the store, migrating an empty one; timed on the empty and the migrated.
    const newMs = await reelCommand(bin, ["budget", "show"], db.url);
    const migratedMs = await reelCommand(bin, ["budget", "show"], db.url);
    templates.set(bin, { name: db.name, newMs, migratedMs });
  }
  return newDatabase(templates.get(bin).name);
}

/** `reel ARGS` (of `bin`) on the store at `url`: its wall time in ms; throws unless it exits 0. */
async function reelCommand(bin, args, url) {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], {
    env: runnerEnv({ REEL_STORE: url }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`reel ${args.join(" ")} exited with ${code}: ${stderr}`);
  return performance.now() - started;
}

export async function dropDatabases() {
  for (const name of databases.splice(0)) {
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((error) =>
      console.log(`(could not drop the bench database ${name}: ${error.message})`),
    );
  }
}

/** Scans of the events table in database `db`: the runners' read-backs of their events, mostly. */
export async function eventReads(db) {
  const { rows } = await adminQuery(
    "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'events'",
    [],
    db.url,
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Updates of the runners' rows in database `db`: one per claim that found room (its fence), plus
 * each heartbeat and each task taken to follow. A claim that finds the bound full updates nothing.
 */
export async function runnerRowUpdates(db) {
  const { rows } = await adminQuery(
    "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'runners'",
    [],
    db.url,
  );
  return Number(rows[0]?.n_tup_upd ?? 0);
}

/**
 * Transactions committed or rolled back so far (the statistics collector's): in database `db`, and
 * in each of the server's other databases (whatever else uses the server: they share its WAL and its
 * CPU, so their commits slow this bench's).
 */
export async function transactions(db) {
  const { rows } = await adminQuery(
    "SELECT datname, xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname IS NOT NULL",
  );
  const others = new Map(rows.filter((r) => r.datname !== db.name).map((r) => [r.datname, Number(r.n)]));
  return { mine: Number(rows.find((r) => r.datname === db.name)?.n ?? 0), others };
}

/** Transactions of other databases between two readings, of those that lived through both. */
export function othersBetween(before, after) {
  let n = 0;
  for (const [name, count] of after.others) if (before.others.has(name)) n += count - before.others.get(name);
  return n;
}

/**
 * The claims made in database `db`, from the calls of reel_bound_full (counted when the database
 * tracks its functions' calls, else undefined): a claim checks the account's bound once, and once
 * more under the service's row when it found room; the claims that succeeded are its `submitting`
 * events. The claims that did not succeed are at most the calls less twice those: one that found
 * room at its first check and then failed (the bound full under the row, a race or a lease lost)
 * made two calls and is counted twice, so both figures are upper bounds.
 */
export async function claimCounts(db) {
  const [calls, tracked, made] = await Promise.all([
    adminQuery(
      "SELECT coalesce(sum(calls), 0) AS n FROM pg_stat_user_functions WHERE funcname = 'reel_bound_full'",
      [],
      db.url,
    ),
    adminQuery("SELECT current_setting('track_functions') AS v", [], db.url),
    adminQuery("SELECT count(*) AS n FROM events WHERE kind = 'submitting'", [], db.url),
  ]);
  if (tracked.rows[0].v === "none") return undefined;
  const succeeded = Number(made.rows[0].n);
  const full = Number(calls.rows[0].n) - 2 * succeeded;
  return { statements: succeeded + full, full };
}
