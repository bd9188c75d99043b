// A test's database used again by a later test of the same worker, instead of a new copy of the
// template each time (CREATE DATABASE writes and syncs a whole database: a fifth of a second, more on
// a busy server; the reset below takes a few milliseconds). Once its test ended, the database is
// renamed (its sessions ended first: nothing of that test reaches it any more, as after a drop),
// then its rows are deleted and its sequences set back, to the template's state exactly. One whose
// schema, privileges or kept rows a test changed is dropped instead. No vitest import: the global
// setup reads the template with it too.
import pg from "pg";

/** What a database at the template's state holds, read once from the template (global-setup.ts). */
export interface TemplateState {
  /** Its tables without rows, those that reference others first (the order they are emptied in). */
  readonly emptyTables: readonly string[];
  /** Its sequences and their values. */
  readonly sequences: readonly {
    readonly name: string;
    readonly lastValue: string;
    readonly isCalled: boolean;
  }[];
  /** Its schema, privileges, settings and the rows of its other tables (reel_schema), as one hash. */
  readonly fingerprint: string;
}

const OURS = "n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'";

/** One line per thing a test could change besides the rows of the tables emptied. */
const SHAPE = `
  SELECT 'n ' || n.nspname || ' ' || coalesce(n.nspacl::text, '') AS x FROM pg_namespace n WHERE ${OURS}
  UNION ALL
  SELECT 'c ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.relacl::text, '')
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${OURS}
  UNION ALL
  SELECT 'a ' || n.nspname || '.' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
      || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attnum > 0 AND NOT a.attisdropped AND ${OURS}
  UNION ALL
  SELECT 'k ' || n.nspname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
    FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE ${OURS}
  UNION ALL
  SELECT 'i ' || indexdef FROM pg_indexes WHERE schemaname NOT LIKE 'pg\\_%' AND schemaname <> 'information_schema'
  UNION ALL
  SELECT 't ' || t.tgrelid::regclass::text || ' ' || t.tgname || ' ' || t.tgenabled::text FROM pg_trigger t WHERE NOT t.tgisinternal
  UNION ALL
  SELECT 'f ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc) || ' ' || coalesce(p.proacl::text, '')
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${OURS}
  UNION ALL
  SELECT 's ' || coalesce(array_to_string(setconfig, ','), '') FROM pg_db_role_setting
    WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())`;

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The statement that reads the fingerprint of a database, its rows of `keptTables` included. */
function fingerprintQuery(keptTables: readonly string[]): string {
  const rows = keptTables.map(
    (table) =>
      `SELECT 'r ${table.replace(/'/g, "''")} ' || coalesce(md5(string_agg(row_to_json(r)::text, ',' ORDER BY row_to_json(r)::text)), '') FROM ${table} r`,
  );
  return `SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS fingerprint FROM (${[SHAPE, ...rows].join(" UNION ALL ")}) parts`;
}

/** The fingerprint of the database `client` is connected to, its rows of `keptTables` included. */
async function fingerprintOf(client: pg.Client, keptTables: readonly string[]): Promise<string> {
  const { rows } = await client.query<{ fingerprint: string }>(fingerprintQuery(keptTables));
  return rows[0]!.fingerprint;
}

/** The tables of the database `client` is connected to, as quoted qualified names, and their rows. */
async function tablesOf(client: pg.Client): Promise<{ name: string; oid: number; rows: boolean }[]> {
  const { rows } = await client.query<{ name: string; oid: number }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name, c.oid::int AS oid
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND ${OURS} ORDER BY 1`,
  );
  const result = [];
  for (const table of rows) {
    const { rows: any } = await client.query(`SELECT 1 FROM ${table.name} LIMIT 1`);
    result.push({ ...table, rows: any.length > 0 });
  }
  return result;
}

/** Reads what a database at the template's state holds, from the template at `url`. */
export async function readTemplateState(url: string): Promise<TemplateState> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await tablesOf(client);
    const empty = tables.filter((t) => !t.rows);
    // Those that reference others first: a row is deleted before the rows it references.
    const { rows: references } = await client.query<{ from: number; to: number }>(
      "SELECT conrelid::int AS from, confrelid::int AS to FROM pg_constraint WHERE contype = 'f' AND conrelid <> confrelid",
    );
    const ordered: string[] = [];
    const placed = new Set<number>();
    const place = (oid: number, path: Set<number>): void => {
      if (placed.has(oid) || path.has(oid)) return;
      path.add(oid);
      for (const r of references) if (r.to === oid) place(r.from, path);
      placed.add(oid);
      const table = empty.find((t) => t.oid === oid);
      if (table) ordered.push(table.name);
    };
    for (const table of empty) place(table.oid, new Set());
    const { rows: sequenceNames } = await client.query<{ name: string }>(
      `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND ${OURS}`,
    );
    const sequences = [];
    for (const { name } of sequenceNames) {
      const { rows } = await client.query<{ last_value: string; is_called: boolean }>(
        `SELECT last_value::text, is_called FROM ${name}`,
      );
      sequences.push({ name, lastValue: rows[0]!.last_value, isCalled: rows[0]!.is_called });
    }
    const kept = tables.filter((t) => t.rows).map((t) => t.name);
    return {
      emptyTables: ordered,
      sequences,
      fingerprint: `${kept.join(",")}:${await fingerprintOf(client, kept)}`,
    };
  } finally {
    await client.end();
  }
}

/** `url` with its database named `name`. */
export function databaseUrl(url: string, name: string): string {
  const at = new URL(url);
  at.pathname = `/${name}`;
  return at.toString();
}

/**
 * Takes database `name` back to the template's state under the name `fresh` (`admin` is connected
 * to another database of the server at `adminUrl`). False when it could not be (a session that would
 * not end, a schema a test changed): it is then to be dropped, under `fresh` if the rename was done.
 */
export async function resetDatabase(
  admin: pg.Client,
  adminUrl: string,
  name: string,
  fresh: string,
  template: TemplateState,
): Promise<{ reset: boolean; name: string }> {
  // Renamed with no session in it: a pool the test left open cannot reach it again by its URL.
  // (Names are ours, [a-z0-9_]: written into the statements, which go as one round trip each.)
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(
        `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid() AND backend_type = 'client backend';
         ALTER DATABASE ${quote(name)} RENAME TO ${quote(fresh)};`,
      );
      break;
    } catch (error) {
      // 55006: still in use (a session reconnecting, an autovacuum worker); else dropped WITH (FORCE).
      if ((error as { code?: string }).code !== "55006" || attempt >= 3) return { reset: false, name };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl(adminUrl, fresh) });
  try {
    await client.connect();
    // Emptied, then compared: one that differs from the template is dropped, emptied or not.
    const kept = template.fingerprint.slice(0, template.fingerprint.lastIndexOf(":"));
    const setvals = template.sequences.map(
      (s) => `SELECT setval('${s.name.replace(/'/g, "''")}', ${s.lastValue}, ${s.isCalled});`,
    );
    const results = (await client.query(
      [
        "BEGIN;",
        ...template.emptyTables.map((t) => `DELETE FROM ${t};`),
        ...setvals,
        "COMMIT;",
        `${fingerprintQuery(kept ? kept.split(",") : [])};`,
      ].join("\n"),
    )) as unknown as pg.QueryResult<{ fingerprint: string }>[];
    const fingerprint = `${kept}:${results.at(-1)!.rows[0]!.fingerprint}`;
    return { reset: fingerprint === template.fingerprint, name: fresh };
  } catch {
    return { reset: false, name: fresh };
  } finally {
    await client.end().catch(() => {});
  }
}
