// One way to write a duration for a reader, used by waits, deadlines, retry notes, the ETA, the
// stall message and the seconds of video in the HTML report.
import { expect, it } from "vitest";
import { formatDuration } from "../src/duration.js";
import { watchForStall } from "../src/output/stall-watchdog.js";

it("writes a duration exact to a tenth of a second when short, then in its two largest units", () => {
  const shown = (ms: number) => formatDuration(ms);
  expect(shown(0)).toBe("0 s");
  expect(shown(200)).toBe("0.2 s");
  expect(shown(2_500)).toBe("2.5 s");
  expect(shown(9_949)).toBe("9.9 s");
  expect(shown(9_950)).toBe("10 s");
  expect(shown(42_400)).toBe("42 s");
  expect(shown(59_600)).toBe("1 min");
  expect(shown(90_000)).toBe("1 min 30 s");
  expect(shown(15 * 60_000)).toBe("15 min");
  expect(shown(3_599_600)).toBe("1 h");
  expect(shown(5_400_000)).toBe("1 h 30 min");
  expect(shown(24 * 3_600_000)).toBe("24 h");
  expect(shown(100_000_000)).toBe("27 h 47 min");
  expect(shown(250_000_000)).toBe("2 d 21 h");
  expect(shown(2 * 86_400_000)).toBe("2 d");
});

it("says how long a stalled transfer was watched even when that is under a second", async () => {
  const why = await new Promise<string>((resolve) => {
    watchForStall({ windowMs: 200, minBytes: 1024 }, resolve);
  });
  expect(why).toContain("received 0 bytes in 0.2 s, under the 1024-byte minimum");
});
