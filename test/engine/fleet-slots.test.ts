// The line a runner's jobs stand in while the account's bound is full (fleet-slots.ts): one job at a
// time tries again (when a slot of the runner frees, after a claim that succeeded, or every short
// while), never every waiting job at once; a stop lets every one go.
import { describe, expect, it } from "vitest";
import { BACKOFF } from "../../src/backoff.js";
import { FleetSlots } from "../../src/engine/fleet-slots.js";

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
});
