// The line a runner's jobs stand in while the account's bound is full (fleet/slot-line.ts): one job
// at a time tries again (when a slot of the runner frees, another runner tells of one, after a claim
// that succeeded, or every while), never every waiting job at once; a stop lets every one go. A slot
// freed with nobody in the line is told to the other runners; one told by another is taken after a
// random pause, unless another runner said first that it takes it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { BACKOFF } from "../../src/backoff.js";
import { FleetSlots, NOTICE_SPREAD_MS, YIELD_MS } from "../../src/fleet/slot-line.js";
import type { SlotOffer } from "../../src/state/job-store.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A notice's offer as the store makes it: `took` counts this runner's "took" answers. */
function offerOf(taken = false): SlotOffer & { took: number; taken: boolean } {
  return {
    taken,
    took: 0,
    take() {
      this.took++;
    },
  };
}

describe("FleetSlots", () => {
  it("lets one waiting job go per freed slot or successful claim, in the order they came", async () => {
    const stop = new AbortController();
    const slots = new FleetSlots(stop.signal);
    const gone: number[] = [];
    for (const n of [1, 2, 3]) void slots.wait().then(() => gone.push(n));
    await sleep(0);
    expect(slots.size).toBe(3);
    slots.freed();
    await sleep(0);
    expect(gone).toEqual([1]);
    slots.claimed();
    await sleep(0);
    expect(gone).toEqual([1, 2]);
    stop.abort();
    await sleep(0);
    expect(gone).toEqual([1, 2, 3]);
  });

  it("lets one go every short while by itself (slots other runners free), not all at once", async () => {
    const stop = new AbortController();
    const slots = new FleetSlots(stop.signal);
    const gone: number[] = [];
    for (const n of [1, 2, 3, 4]) void slots.wait().then(() => gone.push(n));
    await sleep(BACKOFF.fleetFull.maxMs + 50);
    // At least one let go by the timer (each wait at least 250 ms), never more than one per wait.
    expect(gone.length).toBeGreaterThanOrEqual(1);
    expect(gone.length).toBeLessThanOrEqual(Math.floor((BACKOFF.fleetFull.maxMs + 50) / 250));
    expect(gone).toEqual([1, 2, 3, 4].slice(0, gone.length));
    stop.abort();
  });

  it("takes a freed slot again itself, tells the other runners only when nobody waits, and hears theirs", async () => {
    const stop = new AbortController();
    let told = 0;
    // No pause before a notice is answered (random 0), so that the turns come in order here.
    const slots = new FleetSlots(
      stop.signal,
      () => {
        told++;
        return undefined; // nobody heard yet: nothing left to the others
      },
      () => 0,
    );
    slots.freed();
    expect(told).toBe(1);
    const turns: string[] = [];
    for (let n = 0; n < 3; n++) void slots.wait().then((turn) => turns.push(turn));
    await sleep(0);
    slots.freed();
    await sleep(0);
    expect(told).toBe(1);
    expect(turns).toEqual(["freed"]);
    // One slot each: the claim it allowed lets nobody else go (the next would find the bound full).
    slots.claimed("freed");
    const offer = offerOf();
    slots.offered(offer);
    await sleep(5);
    expect(turns).toEqual(["freed", "notice"]);
    expect(offer.took).toBe(1);
    slots.claimed("notice");
    await sleep(0);
    expect(turns).toEqual(["freed", "notice"]);
    // After a timed try, more slots may be free: a success lets the next one go.
    slots.claimed("timer");
    await sleep(0);
    expect(turns).toEqual(["freed", "notice", "claimed"]);
    stop.abort();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers another runner's notice after a random pause, saying it takes the slot, unless another said so first", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const stop = new AbortController();
    const slots = new FleetSlots(
      stop.signal,
      () => undefined,
      () => 0.8,
    );
    const turns: string[] = [];
    void slots.wait().then((turn) => turns.push(turn));
    const first = offerOf();
    const second = offerOf();
    slots.offered(first);
    slots.offered(second);
    // Another runner answers the first before this one's pause ends: it is left to that runner.
    first.taken = true;
    vi.advanceTimersByTime(NOTICE_SPREAD_MS);
    expect(first.took).toBe(0);
    expect(second.took).toBe(1);
    // One waiting job, one slot taken: a third notice finds nobody waiting and is not answered.
    const third = offerOf();
    slots.offered(third);
    vi.advanceTimersByTime(NOTICE_SPREAD_MS);
    expect(third.took).toBe(0);
    stop.abort();
  });

  it("leaves a slot it told of to the other runners: its next job waits, and tries if nobody took it", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const stop = new AbortController();
    const told: { taken: boolean }[] = [];
    const slots = new FleetSlots(stop.signal, () => {
      told.push({ taken: false });
      return told.at(-1);
    });
    const turns: string[] = [];
    // A slot freed with nobody waiting: told, and left to the others for a while.
    slots.freed();
    expect(told).toHaveLength(1);
    // This runner's next job comes meanwhile: it waits rather than claim.
    expect(slots.size).toBeGreaterThan(0);
    void slots.wait().then((turn) => turns.push(turn));
    // Another runner took it: the job goes on waiting.
    told[0]!.taken = true;
    await vi.advanceTimersByTimeAsync(YIELD_MS);
    expect(turns).toEqual([]);
    // The next slot told is taken by nobody: the waiting job tries once the others had their turn.
    const second = new FleetSlots(stop.signal, () => ({ taken: false }));
    const secondTurns: string[] = [];
    second.freed();
    void second.wait().then((turn) => secondTurns.push(turn));
    await vi.advanceTimersByTimeAsync(YIELD_MS - 1);
    expect(secondTurns).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(secondTurns).toEqual(["freed"]);
    // Nobody took that one: nobody waits, likely, and the next slot told is not held back.
    second.freed();
    expect(second.size).toBe(0);
    stop.abort();
  });
});
