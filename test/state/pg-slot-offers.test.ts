// A slot one runner frees and does not use, told to the others (state/pg/slot-notices.ts): of the
// runners with a job waiting, one takes it and says so, and the others let it be, so the freed slot
// costs one claim however many runners wait (fleet/slot-line.ts); the runner that told of it hears
// it was taken. On a real server's LISTEN/NOTIFY.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { FleetSlots, NOTICE_SPREAD_MS } from "../../src/fleet/slot-line.js";
import type { SlotTurn } from "../../src/fleet/coordination.js";
import { SlotNotices } from "../../src/state/pg/slot-notices.js";
import { until } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";

const database = usePostgres();
const SERVICE = 7;

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()));
});

/** A runner's line with one job waiting, hearing the notices of runner `id`; `draw`: its pauses' draw. */
function waitingRunner(url: string, id: number, draw: number) {
  const stop = new AbortController();
  const notices = new SlotNotices(url, SERVICE, id);
  const slots = new FleetSlots(
    stop.signal,
    () => undefined,
    () => draw,
  );
  notices.onFree((offer) => slots.offered(offer));
  const turns: SlotTurn[] = [];
  void slots.wait().then((turn) => turns.push(turn));
  closing.push(async () => {
    stop.abort();
    await notices.close();
  });
  return { notices, turns };
}

describe("a slot told to the runners that wait", () => {
  it("is taken by one of them, the one whose pause ends first; the others hear it is taken", async (context) => {
    const url = await database(context);
    // Each listening (each says hello once it does): heard by the teller.
    const heard = new pg.Client({ connectionString: url });
    await heard.connect();
    closing.push(() => heard.end());
    const hellos = new Set<string>();
    heard.on("notification", (m) => {
      const [, runner, word] = (m.payload ?? "").split(" ");
      if (word === "hello") hellos.add(runner!);
    });
    await heard.query("LISTEN reel_slot_free");
    // Three runners wait, each with one job; the second's pause is the shortest by far (the others'
    // end 25 ms later, time enough for its "took" to reach them).
    const runners = [waitingRunner(url, 2, 0.99), waitingRunner(url, 3, 0), waitingRunner(url, 4, 0.99)];
    const teller = new SlotNotices(url, SERVICE, 1);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    closing.push(async () => {
      await teller.close();
      await pool.end();
    });
    await until(() => ["1", "2", "3", "4"].every((r) => hellos.has(r)), "every runner listening");

    const told = teller.tellFree(pool);
    await until(() => runners[1]!.turns.length === 1, "the second runner's job let go");
    // The teller hears that it was taken (it leaves it to them, and its own next job waits).
    await until(() => told.taken, "the teller hearing the slot taken");
    // Past every pause: nobody else took it.
    await new Promise((resolve) => setTimeout(resolve, 3 * NOTICE_SPREAD_MS));
    expect(runners.map((r) => r.turns)).toEqual([[], ["notice"], []]);
  });
});
