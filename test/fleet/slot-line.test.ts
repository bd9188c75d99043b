// The line a runner's jobs stand in while the account's bound is full (fleet-slots.ts): one job at a
// time tries again (when a slot of the runner frees, another runner tells of one, after a claim that
// succeeded, or every short while), never every waiting job at once; a stop lets every one go. A
// slot freed with nobody in the line is told to the other runners.
import { describe, expect, it } from "vitest";
import { BACKOFF } from "../../src/backoff.js";
import { FleetSlots } from "../../src/fleet/slot-line.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    const slots = new FleetSlots(stop.signal, () => told++);
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
    slots.noticed();
    await sleep(0);
    expect(turns).toEqual(["freed", "notice"]);
    slots.claimed("notice");
    await sleep(0);
    expect(turns).toEqual(["freed", "notice"]);
    // After a timed try, more slots may be free: a success lets the next one go.
    slots.claimed("timer");
    await sleep(0);
    expect(turns).toEqual(["freed", "notice", "claimed"]);
    stop.abort();
  });
});
