// The outputs' times (results.jsonl, each job's record, `reel run --json`) are made without Date for
// speed: they must read exactly as Date's toISOString would write them.
import { expect, it } from "vitest";
import { isoTime } from "../../src/output/iso-time.js";
import { mulberry32 } from "../../src/sandbox/index.js";

it("writes every time exactly as toISOString does, in and out of the fast path's range", () => {
  const edges = [
    0,
    1,
    999,
    1_000,
    59_999,
    86_399_999,
    86_400_000,
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(2025, 4, 1, 9, 0, 0, 7),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1),
    -1,
    -86_400_001,
    1.5,
    Number.MAX_SAFE_INTEGER / 2000,
  ];
  const random = mulberry32(7);
  const spread = Array.from({ length: 5_000 }, () => Math.floor(random() * Date.UTC(2200, 0, 1)));
  // Times close together, then a jump back: the day it remembers must not leak into another.
  const near = Array.from({ length: 2_000 }, (_, i) => Date.UTC(2026, 10, 27, 23, 59, 58) + i * 7);
  const times = [...edges, ...spread, ...near, ...edges];
  const wrong = times.filter((ms) => isoTime(ms) !== new Date(ms).toISOString());
  expect(wrong.map((ms) => [ms, isoTime(ms)])).toEqual([]);
});
