// The order of one runner's events on a PostgreSQL store: its notes (events that change no state,
// such as job.queued) are batched per turn of the event loop, yet stored before a write that records
// an event issued after them, as the SQLite state file stores them (docs/events.md).
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PgStore } from "../../src/state/pg/store.js";
import { usePostgres } from "../helpers/postgres.js";
import { JOB } from "../helpers/seed-jobs.js";

const database = usePostgres();

const opened: PgStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

async function open(url: string): Promise<PgStore> {
  const store = await PgStore.open(url, { baseUrl: "https://a.example" });
  opened.push(store);
  return store;
}

/** The kinds of `key`'s events, as `reel events` reads them back (by id). */
async function kindsOf(store: PgStore, key: string): Promise<string[]> {
  return (await store.readEvents({})).filter((e) => e.jobKey === key).map((e) => e.kind);
}

describe("a runner's events on the PostgreSQL store", () => {
  it("reads back a job's note before the claim made after it in the same turn", async (context) => {
    const url = await database(context);
    const store = await open(url);
    const [head] = await store.upsertJobs([JOB]);
    store.noteEvent("job.queued", null, JOB.key);
    expect(await store.markSubmitting(head!.id)).toBe(1);
    store.noteEvent("job.uploading", null, JOB.key);
    await store.flush();
    expect(await kindsOf(store, JOB.key)).toEqual(["job.queued", "submitting", "job.uploading"]);
  });

  it("still inserts one turn's notes in one statement when nothing else is written", async (context) => {
    const url = await database(context);
    const store = await open(url);
    for (const kind of ["job.queued", "job.uploading", "job.speaking"]) store.noteEvent(kind, null, JOB.key);
    await store.flush();
    // Rows inserted by one statement share its transaction (xmin).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ kind: string; xmin: string }>(
        "SELECT kind, xmin::text FROM events WHERE job_key = $1 ORDER BY id",
        [JOB.key],
      );
      expect(rows.map((row) => row.kind)).toEqual(["job.queued", "job.uploading", "job.speaking"]);
      expect(new Set(rows.map((row) => row.xmin)).size).toBe(1);
    } finally {
      await client.end();
    }
  });
});
