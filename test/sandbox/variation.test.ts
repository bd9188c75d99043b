// The sandbox as a faithful stand-in: run times that vary by a seeded factor (the same
// job as long on two sandboxes of one seed), a rate of tasks that fail, and a result video of the
// width, height and length the request asks for. Real sandboxes over HTTP; the video is read back
// from the bytes downloaded.
import { describe, expect, test } from "vitest";
import { readVideoFacts } from "../../src/sandbox/index.js";
import { actorRequest, idOf, withSandbox } from "./helpers.js";

const text = (n: number) => ({
  chunks: [{ duration: 5, conditions: [{ type: "text", content: `shot ${n}` }] }],
});

/** Run times (ms) of `n` distinct requests on a sandbox of these options, by request: as measured, and as planned. */
async function runTimes(
  options: { jitter: number; seed: number },
  n: number,
): Promise<{ ms: number; planned: number }[]> {
  return withSandbox({ slots: n, preProcessingMs: 0, timeScale: 0.04, ...options }, async (api) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(idOf(await api.call("POST", "/v1/generations", { body: actorRequest(text(i)) })));
    for (const id of ids) await api.waitForFinal(id);
    return ids.map((id) => {
      const times = api.sandbox.counters.tasks.get(id)!;
      return { ms: times.finishedAt! - times.startedAt!, planned: times.plannedRunMs! };
    });
  });
}

describe("run times that vary", () => {
  test("vary within [1 - J, 1 + J] of the run time, the same per request on two sandboxes of one seed", async () => {
    // 5 s of video x 0.04 = 200 ms, +-50%.
    const [a, b, other] = await Promise.all([
      runTimes({ jitter: 0.5, seed: 7 }, 12),
      runTimes({ jitter: 0.5, seed: 7 }, 12),
      runTimes({ jitter: 0.5, seed: 8 }, 12),
    ]);
    for (const { ms, planned } of [...a, ...b, ...other]) {
      // Planned within [1 - J, 1 + J] of 200 ms, and run at least that long (a timer may be late on
      // a busy machine, never early).
      expect(planned).toBeGreaterThanOrEqual(100);
      expect(planned).toBeLessThanOrEqual(300);
      expect(ms).toBeGreaterThanOrEqual(planned - 5);
    }
    // Spread out, not all alike.
    const plans = a.map((t) => t.planned);
    expect(Math.max(...plans) - Math.min(...plans)).toBeGreaterThan(80);
    // The same request is to run as long on both (as planned: the timers' own lateness on a busy
    // machine is no part of the claim), and not on a sandbox of another seed.
    const planned = (times: readonly { planned: number }[]) => times.map((t) => t.planned);
    const [pa, pb, pother] = [planned(a), planned(b), planned(other)];
    expect(pa).toEqual(pb);
    expect(pa.some((ms, i) => Math.abs(ms - pother[i]!) > 40)).toBe(true);
  });

  test("fails the share of tasks asked, with a reason, and gives their credits back", async () => {
    await withSandbox(
      { credits: 1000, timeScale: 0.001, preProcessingMs: 0, faults: { taskFailRate: 0.5 } },
      async (api) => {
        const ids: string[] = [];
        for (let i = 0; i < 40; i++)
          ids.push(idOf(await api.call("POST", "/v1/generations", { body: actorRequest(text(i)) })));
        const finals = await Promise.all(ids.map((id) => api.waitForFinal(id)));
        const failed = finals.filter((res) => res.json.status === "Fail");
        expect(failed.length).toBeGreaterThan(8);
        expect(failed.length).toBeLessThan(32);
        expect(failed[0]!.json.failReason ?? failed[0]!.text).toMatch(/injected failure/);
        // Each success cost its 5 s; each failure was given back.
        expect(api.sandbox.credits()).toBe(1000 - 5 * (40 - failed.length));
      },
    );
  });
});

describe("the result video", () => {
  test.each([
    ["1080p", "9:16", 1080, 1920],
    ["720p", "16:9", 1280, 720],
    ["1080p", "16:9", 1920, 1080],
  ])(
    "is %s at %s as asked (%ix%i), and as long as its chunks",
    async (resolution, aspectRatio, width, height) => {
      await withSandbox({ timeScale: 0.001, preProcessingMs: 0 }, async (api) => {
        const body = actorRequest({
          resolution,
          aspectRatio,
          chunks: [
            { duration: 10, conditions: [{ type: "text", content: "one" }] },
            { duration: 5, conditions: [{ type: "text", content: "two" }] },
          ],
        });
        const final = await api.waitForFinal(idOf(await api.call("POST", "/v1/generations", { body })));
        const bytes = Buffer.from(await (await fetch(final.json.resultVideoURL)).arrayBuffer());
        expect(readVideoFacts(bytes)).toEqual({ width, height, duration: 15 });
        // A few kilobytes, whatever the length.
        expect(bytes.length).toBeLessThan(16_000);
      });
    },
  );
});
