// The backoff table: each schedule gives the waits its comment promises.
import { describe, expect, it } from "vitest";
import { BACKOFF, backoffDelay, failedPollBackoff } from "../src/backoff.js";
import { DEFAULTS } from "../src/defaults.js";
import { parseDuration } from "../src/duration.js";

describe("backoff", () => {
  it("submissions refused for now: 1 s doubling up to 60 s, as the engine's inline formula did", () => {
    for (let n = 0; n < 12; n++) {
      expect(backoffDelay(BACKOFF.submitRefused, n)).toBe(Math.min(60_000, 1_000 * 2 ** Math.min(6, n)));
    }
    expect(backoffDelay(BACKOFF.submitRefused, 0, { floorMs: 5_000 })).toBe(5_000);
  });

  it("client retries: full jitter under 250 ms doubling to 20 s, never below Retry-After", () => {
    expect(backoffDelay(BACKOFF.clientRetry, 3, { random: () => 0.5 })).toBe(1_000);
    expect(backoffDelay(BACKOFF.clientRetry, 20, { random: () => 0.999999 })).toBe(19_999);
    expect(backoffDelay(BACKOFF.clientRetry, 0, { random: () => 0, floorMs: 3_000 })).toBe(3_000);
  });

  it("failed polls: from the poll floor to its ceiling", () => {
    const timing = DEFAULTS.remotePolling.timing;
    expect([1, 2, 5, 9].map((n) => backoffDelay(failedPollBackoff(timing), n))).toEqual([
      2_000, 4_000, 30_000, 30_000,
    ]);
  });

  it("durations written in --help are the milliseconds used", () => {
    for (const d of [DEFAULTS.pollDeadline, DEFAULTS.settle, DEFAULTS.incompleteGrace]) {
      expect(parseDuration(d.text)).toBe(d.ms);
    }
    expect([DEFAULTS.pollDeadline.ms, DEFAULTS.settle.ms, DEFAULTS.incompleteGrace.ms]).toEqual([
      24 * 3_600_000,
      700,
      3_000,
    ]);
  });
});
