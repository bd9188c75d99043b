// The PostgreSQL store's schema on a real server (a fresh database per test): applied whole, once,
// however many runners start at the same moment; a newer schema refused; the URL's password never
// in a message.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openPool } from "../../src/state/pg/connect.js";
import { redactedUrl } from "../../src/state/pg/store-url.js";
import { migratePg, type PgMigrations, schemaVersionOf } from "../../src/state/pg/migrate.js";
import { PG_MIGRATIONS } from "../../src/state/pg/migrations.js";
import { usePostgres } from "../helpers/postgres.js";

const database = usePostgres();

async function withPool<T>(url: string, use: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = await openPool(url);
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

const tables = async (pool: pg.Pool): Promise<string[]> =>
  (
    await pool.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
  ).rows.map((r) => r.name);

describe("the PostgreSQL store's migrations", () => {
  it("make the schema once; a second start finds it current", async (context) => {
    const url = await database(context, { empty: true });
    await withPool(url, async (pool) => {
      expect(await migratePg(pool, PG_MIGRATIONS)).toBe(0);
      expect(await schemaVersionOf(pool)).toBe(PG_MIGRATIONS.list.length);
      expect(await tables(pool)).toEqual(
        expect.arrayContaining(["jobs", "services", "assets", "speech", "upload_intents", "runners"]),
      );
      expect(await migratePg(pool, PG_MIGRATIONS)).toBe(PG_MIGRATIONS.list.length);
    });
  });

  it("are applied once when six runners start at the same moment", async (context) => {
    const url = await database(context, { empty: true });
    const pools = await Promise.all(Array.from({ length: 6 }, () => openPool(url)));
    try {
      const found = await Promise.all(pools.map((pool) => migratePg(pool, PG_MIGRATIONS)));
      // One of them migrated from 0; the others waited on the lock and found it done.
      expect(found.filter((v) => v === 0)).toHaveLength(1);
      const { rows } = await pools[0]!.query<{ version: number }>(
        "SELECT version FROM reel_schema ORDER BY 1",
      );
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.list.map((_, i) => i + 1));
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  // A runner's start on a current store reads the version once: it neither waits for a runner that
  // holds the migrations' lock (another reel migrating), nor sends the lock's statements.
  it("a start on a current schema does not wait for the migrations' lock", async (context) => {
    const url = await database(context);
    await withPool(url, async (pool) => {
      const holder = await pool.connect();
      try {
        await holder.query("SELECT pg_advisory_lock($1)", [0x7265656c]);
        const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("waited"), 2_000).unref());
        expect(await Promise.race([migratePg(pool, PG_MIGRATIONS), timeout])).toBe(PG_MIGRATIONS.list.length);
      } finally {
        holder.release(true);
      }
    });
  });

  it("leave nothing of a migration that fails half-way, and stop there", async (context) => {
    const url = await database(context, { empty: true });
    const broken: PgMigrations = {
      list: ["CREATE TABLE one (x int)", "CREATE TABLE two (x int); SELECT no_such_function()"],
      tooNew: () => new Error("too new"),
    };
    await withPool(url, async (pool) => {
      await expect(migratePg(pool, broken)).rejects.toThrow(/no_such_function/);
      expect(await schemaVersionOf(pool)).toBe(1);
      expect(await tables(pool)).toEqual(["one", "reel_schema"]);
    });
  });

  it("refuse a database a newer reel migrated", async (context) => {
    const url = await database(context, { empty: true });
    await withPool(url, async (pool) => {
      await migratePg(pool, PG_MIGRATIONS);
      await pool.query("INSERT INTO reel_schema (version) VALUES (999)");
      await expect(migratePg(pool, PG_MIGRATIONS)).rejects.toThrow(/version 999, newer than this reel knows/);
    });
  });
});

describe("the store URL's password", () => {
  it("is masked in what reel says, also when the login is refused", async (context) => {
    const url = new URL(await database(context, { empty: true }));
    url.password = "s3cret-Pa55word";
    expect(redactedUrl(url.toString())).not.toContain("s3cret-Pa55word");
    expect(redactedUrl(url.toString())).toContain(":***@");
    const refused = await openPool(url.toString()).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).toMatch(/cannot use the store postgres:\/\/reel_test:\*\*\*@/);
    expect(refused?.message).not.toContain("s3cret-Pa55word");
  });
});
