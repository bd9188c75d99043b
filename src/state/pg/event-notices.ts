// Every runner's events, told to a follower in another process (`reel events --follow`) as each
// statement that records some commits (LISTEN/NOTIFY: migration 18), rather than found by reading
// the store every half second. The follower registers itself (event_followers, renewed while it
// follows): with nobody following, the runners send nothing. A notice is only a wake-up: one lost
// (the connection broken) costs the follower's slower fallback read, never an event.
import type pg from "pg";
import { DB_NOW } from "./sql/runners.js";

const CHANNEL = "reel_events";
/** How long a registration lasts unless renewed; it is renewed every third of it. */
const FOLLOWER_MS = 30_000;

/**
 * Calls `wake` after each commit that recorded events, on a connection of `pool` held for it until
 * the returned stop. Undefined when the store cannot be listened to (the follower reads on its clock).
 */
export async function listenForEvents(
  pool: pg.Pool,
  wake: () => void,
): Promise<(() => Promise<void>) | undefined> {
  let client: pg.PoolClient;
  let id: string;
  try {
    client = await pool.connect();
  } catch {
    return undefined;
  }
  try {
    client.on("notification", (message) => {
      if (message.channel === CHANNEL) wake();
    });
    await client.query(`LISTEN ${CHANNEL}`);
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO event_followers (until_at) VALUES (${DB_NOW} + $1) RETURNING id`,
      [FOLLOWER_MS],
    );
    id = rows[0]!.id;
  } catch {
    client.release(true);
    return undefined;
  }
  let renewing: Promise<unknown> = Promise.resolve();
  const renewal = setInterval(() => {
    renewing = client
      .query(`UPDATE event_followers SET until_at = ${DB_NOW} + $2 WHERE id = $1`, [id, FOLLOWER_MS])
      .catch(() => {});
  }, FOLLOWER_MS / 3);
  renewal.unref();
  return async () => {
    clearInterval(renewal);
    await renewing;
    try {
      // Gone stale ones with it: a follower killed leaves its row until it ends.
      await client.query(`DELETE FROM event_followers WHERE id = $1 OR until_at < ${DB_NOW}`, [id]);
      await client.query(`UNLISTEN ${CHANNEL}`);
      client.release();
    } catch {
      client.release(true);
    }
  };
}
