// Injected failures: reproducible under a seed, before or after the effect as documented, limited
// to the routes asked for.
import { request } from "undici";
import { describe, expect, test } from "vitest";
import type { SandboxFaults } from "../../src/sandbox/index.js";
import { mulberry32, resultVideoBytes } from "../../src/sandbox/index.js";
import { type Api, actorRequest, fixture, idOf, withSandbox } from "./helpers.js";

/** Statuses of `count` polls of one existing task (a 200 is what "500 after effect" replaces). */
async function statuses(api: Api, taskId: string, count: number): Promise<(number | "drop")[]> {
  const seen: (number | "drop")[] = [];
  for (let i = 0; i < count; i++) {
    try {
      seen.push((await api.call("GET", `/v1/generations/${taskId}`)).status);
    } catch {
      seen.push("drop");
    }
  }
  return seen;
}

const MIXED: SandboxFaults = {
  seed: 42,
  rate429: 0.25,
  rate503: 0.15,
  rate500AfterEffect: 0.15,
  rateDrop: 0.1,
};

describe("faults", () => {
  test("mulberry32 is a pure function of its seed", () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const c = mulberry32(8);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect([c(), c(), c()]).not.toEqual(first);
    for (const x of first) expect(x >= 0 && x < 1).toBe(true);
  });

  test("the same seed gives the same sequence of outcomes", async () => {
    const run = (faults: SandboxFaults) =>
      withSandbox({}, async (api) => {
        const id = idOf(await api.call("POST", "/v1/generations", { body: actorRequest() }));
        api.sandbox.setFaults(faults);
        return statuses(api, id, 40);
      });
    const first = await run(MIXED);
    expect(await run(MIXED)).toEqual(first);
    expect(await run({ ...MIXED, seed: 43 })).not.toEqual(first);
    for (const status of [200, 429, 503, 500, "drop"]) expect(first).toContain(status);
    // setFaults restarts the PRNG from the seed.
    await withSandbox({}, async (api) => {
      const id = idOf(await api.call("POST", "/v1/generations", { body: actorRequest() }));
      api.sandbox.setFaults(MIXED);
      await statuses(api, id, 5);
      api.sandbox.setFaults(MIXED);
      expect(await statuses(api, id, 40)).toEqual(first);
      api.sandbox.setFaults(undefined);
      expect(new Set(await statuses(api, id, 10))).toEqual(new Set([200]));
    });
  });

  test("429 and 503 carry Retry-After and happen before any effect", async () => {
    await withSandbox({ faults: { rate429: 0.5, rate503: 0.5, retryAfterSeconds: 0.25 } }, async (api) => {
      for (let i = 0; i < 10; i++) {
        const res = await api.call("POST", "/v1/generations", { body: actorRequest() });
        expect([429, 503]).toContain(res.status);
        expect(res.headers["retry-after"]).toBe("0.25");
        expect(typeof res.json.detail).toBe("string");
      }
      const counters = api.sandbox.counters;
      expect(counters.generationsCreated).toBe(0);
      expect(counters.faultCount("429") + counters.faultCount("503")).toBe(10);
    });
  });

  test("a 429 on an upload leaves the connection usable", async () => {
    await withSandbox(
      { faults: { rate429: 1, retryAfterSeconds: 0, routes: ["POST /v1/assets"] } },
      async (api) => {
        const png = await fixture("tiny.png");
        expect((await api.upload(Buffer.concat([png, Buffer.alloc(2 * 1024 * 1024)]))).status).toBe(429);
        expect((await api.call("GET", "/v1/assets/5")).status).toBe(404);
        expect(api.sandbox.counters.uploadsByHash.size).toBe(0);
      },
    );
  });

  test("500 after effect: the generation, speech and upload exist although the answer is 500", async () => {
    await withSandbox(
      { timeScale: 0, preProcessingMs: 0, faults: { rate500AfterEffect: 1 } },
      async (api) => {
        const res = await api.call("POST", "/v1/generations", { body: actorRequest() });
        expect(res.status).toBe(500);
        expect((await api.call("POST", "/v1/audios", { body: { voiceId: 1, text: "hi" } })).status).toBe(500);
        expect((await api.upload(await fixture("tiny.png"))).status).toBe(500);
        const counters = api.sandbox.counters;
        expect(counters.generationsCreated).toBe(1);
        expect(counters.speechByInput.size).toBe(1);
        expect(counters.uploadsByHash.size).toBe(1);
        // A refused request had no effect, so it keeps its own status.
        expect((await api.call("POST", "/v1/generations", { body: { chunks: [] } })).status).toBe(422);
        api.sandbox.setFaults(undefined);
        const [taskId] = counters.tasks.keys();
        expect((await api.waitForFinal(taskId ?? "")).json.status).toBe("Success");
      },
    );
  });

  test("dropped connections: no response, before or after the effect, both counted", async () => {
    await withSandbox({ faults: { rateDrop: 1, seed: 3, routes: ["POST /v1/generations"] } }, async (api) => {
      let errors = 0;
      for (let i = 0; i < 12; i++) {
        await expect(
          api.call("POST", "/v1/generations", { body: actorRequest({ seed: i }) }),
        ).rejects.toThrow();
        errors++;
      }
      const counters = api.sandbox.counters;
      const before = counters.faultCount("drop-before-effect");
      const after = counters.faultCount("drop-after-effect");
      expect(before + after).toBe(errors);
      expect(before).toBeGreaterThan(0);
      expect(after).toBeGreaterThan(0);
      expect(counters.generationsCreated).toBe(after);
      expect(counters.requestCount("POST", "/v1/generations", "drop")).toBe(errors);
      // Other routes are untouched.
      expect((await api.call("GET", "/v1/generations/1")).status).toBe(404);
    });
  });

  test("latency is added, fixed or within a range", async () => {
    await withSandbox({ faults: { latencyMs: [40, 60] } }, async (api) => {
      const started = performance.now();
      await api.call("GET", "/v1/assets/1");
      expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    });
  });

  test("a wrong key is a plain 401 whatever the faults", async () => {
    await withSandbox({ faults: { rate503: 1 } }, async (api) => {
      expect((await api.call("GET", "/v1/generations/1", { key: "nope" })).status).toBe(401);
      expect(api.sandbox.counters.faults.size).toBe(0);
    });
  });

  test("bad fault settings are refused with the option's name", async () => {
    await withSandbox({}, async (api) => {
      expect(() => api.sandbox.setFaults({ rate429: 1.5 })).toThrow(/faults.rate429/);
      expect(() => api.sandbox.setFaults({ rate429: 0.6, rate503: 0.6 })).toThrow(/at most 1/);
      expect(() => api.sandbox.setFaults({ latencyMs: [5, 1] })).toThrow(/latencyMs/);
    });
  });
});

describe("downloads", () => {
  async function resultUrl(api: Api): Promise<string> {
    const id = idOf(await api.call("POST", "/v1/generations", { body: actorRequest() }));
    return (await api.waitForFinal(id)).json.resultVideoURL;
  }

  test("Range requests give 206 slices that add up to the file; HEAD and If-Range work", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const url = await resultUrl(api);
      const whole = resultVideoBytes(1280, 720, 5); // actorRequest: 720p, 16:9, 5 s
      const full = await request(url);
      expect(full.statusCode).toBe(200);
      expect(full.headers["accept-ranges"]).toBe("bytes");
      expect(full.headers["content-type"]).toBe("video/mp4");
      const etag = String(full.headers.etag);
      expect(Buffer.from(await full.body.arrayBuffer()).equals(whole)).toBe(true);

      const head = await request(url, { headers: { range: "bytes=0-99" } });
      expect(head.statusCode).toBe(206);
      expect(head.headers["content-range"]).toBe(`bytes 0-99/${whole.length}`);
      const tail = await request(url, { headers: { range: "bytes=100-", "if-range": etag } });
      expect(tail.statusCode).toBe(206);
      const stitched = Buffer.concat([
        Buffer.from(await head.body.arrayBuffer()),
        Buffer.from(await tail.body.arrayBuffer()),
      ]);
      expect(stitched.equals(whole)).toBe(true);

      const suffix = await request(url, { headers: { range: "bytes=-10" } });
      expect(Buffer.from(await suffix.body.arrayBuffer()).equals(whole.subarray(-10))).toBe(true);
      const beyond = await request(url, { headers: { range: `bytes=${whole.length}-` } });
      await beyond.body.dump();
      expect(beyond.statusCode).toBe(416);
      expect(beyond.headers["content-range"]).toBe(`bytes */${whole.length}`);
      const stale = await request(url, { headers: { range: "bytes=100-", "if-range": '"other"' } });
      await stale.body.dump();
      expect(stale.statusCode).toBe(200);
      const onlyHeaders = await request(url, { method: "HEAD" });
      await onlyHeaders.body.dump();
      expect(onlyHeaders.headers["content-length"]).toBe(String(whole.length));
      expect((await request(`${api.sandbox.baseUrl}/files/nope.mp4`)).statusCode).toBe(404);
    });
  });

  test("a truncated download announces the full length, then stops; a Range request resumes it", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const url = await resultUrl(api);
      const whole = resultVideoBytes(1280, 720, 5); // actorRequest: 720p, 16:9, 5 s
      api.sandbox.setFaults({ rateTruncateDownload: 1 });
      const received: Buffer[] = [];
      const res = await request(url);
      expect(res.headers["content-length"]).toBe(String(whole.length));
      await expect(
        (async () => {
          for await (const chunk of res.body) received.push(chunk as Buffer);
        })(),
      ).rejects.toThrow();
      const got = Buffer.concat(received);
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(whole.length);
      expect(api.sandbox.counters.faultCount("truncated-download")).toBe(1);

      api.sandbox.setFaults(undefined);
      const rest = await request(url, { headers: { range: `bytes=${got.length}-` } });
      expect(rest.statusCode).toBe(206);
      expect(Buffer.concat([got, Buffer.from(await rest.body.arrayBuffer())]).equals(whole)).toBe(true);
    });
  });
});
