// `reel events --follow` on a shared PostgreSQL store (src/events/read-back.ts): runners' statements
// commit in another order than they took their event ids, so an event can appear below one already
// printed. It is printed when its write commits, however long that took, and once.
import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readBack } from "../../src/events/read-back.js";
import { PgStore } from "../../src/state/pg/store.js";
import { usePostgres } from "../helpers/postgres.js";

const database = usePostgres();

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

async function client(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  closing.push(() => c.end());
  return c;
}

/** One event row, as a runner's note writes it: the job it names. */
const INSERT = `INSERT INTO events (at, kind, job_key, runner) VALUES ($1, 'job.queued', $2, 'h:1') RETURNING id`;

describe("reel events --follow on PostgreSQL", () => {
  it("prints an event whose write commits long after a later id was printed, once", async (context) => {
    const url = await database(context);
    const reader = await PgStore.open(url, { baseUrl: "https://a.example", readonly: true });
    closing.push(() => reader.close());
    const slow = await client(url);
    const quick = await client(url);

    // The slow runner takes its id, and does not commit yet.
    await slow.query("BEGIN");
    const [early] = (await slow.query<{ id: string }>(INSERT, [Date.now(), "m/early"])).rows;
    const [late] = (await quick.query<{ id: string }>(INSERT, [Date.now(), "m/late"])).rows;
    expect(Number(early!.id)).toBeLessThan(Number(late!.id));

    // The follower's clock, moved by the test; its reads, counted (every 10 ms: no notices here).
    let clock = 0;
    let reads = 0;
    const store = {
      readEvents: (query: Parameters<PgStore["readEvents"]>[0]) => {
        reads++;
        return reader.readEvents(query);
      },
      openWrites: () => reader.openWrites(),
    };
    const told: string[] = [];
    const stop = new AbortController();
    const following = readBack(
      store,
      { follow: true, signal: stop.signal, now: () => clock, pollMs: 10 },
      (list) => told.push(...list.map((event) => event.job ?? "")),
    );
    try {
      await vi.waitUntil(() => told.includes("m/late"), { timeout: 5_000 });
      // A minute of the follower's time passes with the slow write still open (a runner paused).
      clock += 60_000;
      const before = reads;
      await vi.waitUntil(() => reads >= before + 6, { timeout: 5_000 });
      expect(told).toEqual(["m/late"]);
      await slow.query("COMMIT");
      await vi.waitUntil(() => told.includes("m/early"), { timeout: 5_000 });
      // Read again until the gap settles, and printed once.
      const after = reads;
      await vi.waitUntil(() => reads >= after + 6, { timeout: 5_000 });
      expect(told).toEqual(["m/late", "m/early"]);
    } finally {
      stop.abort();
      await following;
    }
  });
});
