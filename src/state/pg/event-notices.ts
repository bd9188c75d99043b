// Every runner's events, told to a follower in another process (`reel events --follow`) as a
// runner commits some (LISTEN/NOTIFY), rather than found by reading the store every half second.
// The follower registers itself (event_followers, migration 18, renewed while it follows); each
// runner's heartbeat reads whether one is registered, and only then does the runner tell its
// commits of events (at most one notice per NOTICE_GAP_MS): with nobody following, nothing is sent
// and no write pays for it. A notice is only a wake-up: one lost, or not sent yet (a runner learns
// of a new follower at its next beat), costs the follower's slower fallback read, never an event.
import type pg from "pg";
import { DB_NOW } from "./sql/runners.js";

const CHANNEL = "reel_events";
/** How long a registration lasts unless renewed; it is renewed every third of it. */
const FOLLOWER_MS = 30_000;
/** The least time between two notices of one runner: a follower reads at most every 500 ms. */
const NOTICE_GAP_MS = 250;

/**
 * A runner's notice of its commits of events, sent on `on` (the heartbeat's connection: the writer's
 * is busy with its statements) while `followed()` says a follower is registered.
 */
export function noticeFollowers(on: Pick<pg.Pool, "query">, followed: () => boolean): () => void {
  let sentAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const send = (): void => {
    timer = undefined;
    sentAt = performance.now();
    void on.query("SELECT pg_notify($1, '')", [CHANNEL]).catch(() => {});
  };
  return () => {
    if (timer || !followed()) return;
    const wait = sentAt + NOTICE_GAP_MS - performance.now();
    if (wait <= 0) return send();
    timer = setTimeout(send, wait);
    timer.unref();
  };
}

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
