// The PostgreSQL store's connection: a pool from a postgres:// URL. The URL's secrets (its password,
// store-url.ts says which) are secrets like the API key: every message names the URL with them
// masked, and they are never written anywhere. PGPASSWORD and ~/.pgpass work as for psql
// (node-postgres reads them).
import type pg from "pg";
import { DatabaseError, Pool } from "./driver.js";
import { StateFileError } from "../../errors/state.js";
import { isConnectionError, type Outage } from "./outage.js";
import { redactedUrl, scrubStoreSecrets } from "./store-url.js";

/** How long a connection may take before the store is said unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;

/** How every connection of the store connects: its pool's, and a runner's listener's (slot-notices.ts). */
export function connectionSettings(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A server gone without a word (a hard fail-over, a NAT that forgot the connection) is found by
    // the kernel's keepalive probes rather than never, on an idle connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // A write's promise resolves once its commit is flushed to the server's disk, whatever the
    // server's own default: an intent must survive a crash of the database server too.
    options: "-c synchronous_commit=on",
  };
}

/**
 * A pool on `url`, checked by one query: through `outage` when given (a writer rides out a store that
 * does not answer yet, as it does later), else failing at once. Throws StateFileError naming the URL
 * without its password when the login is refused or the store cannot be reached (see storeOpenError).
 */
export async function openPool(url: string, max = 4, outage?: Outage): Promise<pg.Pool> {
  const pool = new Pool({ ...connectionSettings(url), max });
  // An idle client's error (the server restarted) must not crash the process: the next query says it.
  pool.on("error", () => {});
  // Nor a checked-out client's. The pool listens only while a client is idle, and hands one to a
  // waiting connect() before its caller can listen: a session ended by the server (a restart,
  // pg_terminate_backend) read in the same chunk as the last answer would be an 'error' event nobody
  // hears, which ends the process. Heard from birth, on every client; the failed query rejects,
  // which is what counts, and the pool drops the broken client when it is released.
  pool.on("connect", (client) => client.on("error", () => {}));
  try {
    const check = (): Promise<unknown> => pool.query("SELECT 1");
    await (outage ? outage.run(check) : check());
  } catch (error) {
    await pool.end().catch(() => {});
    throw storeOpenError(error, url, true);
  }
  return pool;
}

/**
 * What opening the store at `url` failed with, as the user is told, naming the URL without its
 * password: a store that stayed unreachable (a writer's outage, StoreUnreachableError) as it is; one
 * that does not answer, for a reader (which waits for nothing), said so; at the login (`login`),
 * any other failure as the login refused; after it, the database's own refusal (a SQLSTATE). Anything
 * else (a bug) passes on.
 */
export function storeOpenError(error: unknown, url: string, login: boolean): unknown {
  if (!(error instanceof Error) || error instanceof StateFileError) return error;
  const message = scrubStoreSecrets(error.message, url);
  if (isConnectionError(error)) {
    return new StateFileError(
      `the store ${redactedUrl(url)} does not answer (${message}). Check that the database server runs and that the URL names it, then rerun.`,
    );
  }
  if (login) {
    return new StateFileError(
      `cannot use the store ${redactedUrl(url)}: ${message}. Check the URL, that the server runs, and the password (PGPASSWORD, ~/.pgpass or the URL).`,
    );
  }
  if (error instanceof DatabaseError)
    return new StateFileError(`cannot use the store ${redactedUrl(url)}: ${message}.`);
  return error;
}
