// The PostgreSQL store's connection (issue 18): a pool from a postgres:// URL. The password in the
// URL is a secret like the API key: every message names the URL with it masked, and it is never
// written anywhere. PGPASSWORD and ~/.pgpass work as for psql (node-postgres reads them).
import pg from "pg";
import { StateFileError } from "../errors.js";

/** Whether `value` names a PostgreSQL store rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** `url` with its password masked, for every message and log line. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    // Not parseable as a URL: hide whatever sits between the scheme's user and the host.
    return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
  }
}

/** How long a connection may take before the store is said unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A pool on `url`, checked by one query. Throws StateFileError naming the URL without its password
 * when the server cannot be reached or refuses the login.
 */
export async function openPool(url: string, max = 4): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A server gone without a word (a hard fail-over, a NAT that forgot the connection) is found by
    // the kernel's keepalive probes rather than never, on an idle connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // A write's promise resolves once its commit is flushed to the server's disk, whatever the
    // server's own default: an intent must survive a crash of the database server too.
    options: "-c synchronous_commit=on",
  });
  // An idle client's error (the server restarted) must not crash the process: the next query says it.
  pool.on("error", () => {});
  try {
    await pool.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StateFileError(
      `cannot use the store ${redactedUrl(url)}: ${scrubbed((error as Error).message, url)}. Check the URL, that the server runs, and the password (PGPASSWORD, ~/.pgpass or the URL).`,
    );
  }
  return pool;
}

/** A driver message with the URL's password taken out, should the driver ever echo it. */
function scrubbed(message: string, url: string): string {
  let password = "";
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // no password to take out
  }
  return password.length > 0 ? message.split(password).join("***") : message;
}
