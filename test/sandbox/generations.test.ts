// The lifecycle of generation tasks: statuses in order, slots respected, failures with a reason,
// credits, exact big ids, and the counters the engine's tests rely on.
import { describe, expect, test } from "vitest";
import { actorRequest, avatarRequest, fixture, idOf, withSandbox } from "./helpers.js";
import { expectServedBytes } from "../helpers/videos.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("lifecycle", () => {
  test("PreProcessing -> Pending -> Running -> Success, with a real MP4 at resultVideoURL", async () => {
    // Each status lasts half a second (5 s of video at 0.1): seen by a poll every few ms even on a
    // busy machine (at 100 ms of PreProcessing, a poll 100 ms late missed it under load).
    await withSandbox({ slots: 1, preProcessingMs: 500, timeScale: 0.1 }, async (api) => {
      const first = idOf(await api.call("POST", "/v1/generations", { body: actorRequest() }));
      const second = idOf(await api.call("POST", "/v1/generations", { body: actorRequest({ seed: 2 }) }));
      const seen = new Map<string, string[]>([
        [first, []],
        [second, []],
      ]);
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        let done = true;
        for (const [id, statuses] of seen) {
          const res = await api.call("GET", `/v1/generations/${id}`);
          if (statuses.at(-1) !== res.json.status) statuses.push(res.json.status);
          if (res.json.status !== "Success") done = false;
        }
        if (done) break;
        await sleep(5);
      }
      expect(seen.get(first)).toEqual(["PreProcessing", "Running", "Success"]);
      // One slot: the second waits in Pending while the first runs.
      expect(seen.get(second)).toEqual(["PreProcessing", "Pending", "Running", "Success"]);

      const task = await api.call("GET", `/v1/generations/${first}`);
      expect(task.json).toMatchObject({ id: Number(first), status: "Success" });
      expect(new Date(task.json.createTime).toISOString()).toBe(task.json.createTime);
      expect(task.json.resultVideoURL).toMatch(new RegExp(`^${api.sandbox.baseUrl}/files/`));
      const video = Buffer.from(await (await fetch(task.json.resultVideoURL)).arrayBuffer());
      expectServedBytes(video);
      expect(video.length).toBeGreaterThan(1000);
      // The result is an asset of its own.
      const asset = await api.call("GET", `/v1/assets/${task.json.resultVideoId}`);
      expect(asset.json.url).toBe(task.json.resultVideoURL);

      const times = api.sandbox.counters.tasks.get(first);
      expect(times?.startedAt).toBeGreaterThanOrEqual(times?.createdAt ?? Number.NaN);
      expect(times?.finishedAt).toBeGreaterThanOrEqual(times?.startedAt ?? Number.NaN);
      expect(times?.firstDownloadAt).toBeGreaterThanOrEqual(times?.finishedAt ?? Number.NaN);
      // Run time follows the seconds of video: 5 s x 0.04 = 200 ms.
      expect((times?.finishedAt ?? 0) - (times?.startedAt ?? 0)).toBeGreaterThanOrEqual(190);
    });
  });

  test("no more than `slots` tasks run at once; unfinished tasks are counted", async () => {
    await withSandbox({ slots: 2, preProcessingMs: 0, timeScale: 0.04 }, async (api) => {
      // Submitted together, so all seven are unfinished at once (each runs 5 s x 0.04 = 200 ms).
      const submitted = await Promise.all(
        Array.from({ length: 7 }, (_, i) =>
          api.call("POST", "/v1/generations", { body: actorRequest({ seed: i }) }),
        ),
      );
      const ids = submitted.map(idOf);
      for (const id of ids) expect((await api.waitForFinal(id)).json.status).toBe("Success");
      const counters = api.sandbox.counters;
      expect(counters.peakRunning).toBe(2);
      expect(counters.peakUnfinished).toBe(7);
      expect(counters.unfinished).toBe(0);
      expect(counters.running).toBe(0);
      expect(counters.generationsCreated).toBe(7);
      expect(counters.duplicateGenerations()).toBe(0);
    });
  });

  test("defaults fill model, resolution and aspect ratio", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const res = await api.call("POST", "/v1/generations", {
        body: { chunks: [{ duration: 10, conditions: [{ type: "text", content: "hi" }] }] },
      });
      expect(res.status).toBe(200);
      expect((await api.waitForFinal(idOf(res))).json.status).toBe("Success");
    });
  });
});

describe("failures", () => {
  test.each([
    [
      "a missing source asset",
      (_image: string, audio: string) => avatarRequest("999999", audio),
      "asset 999999 not found",
    ],
    ["a missing audio asset", (image: string) => avatarRequest(image, "888888"), "asset 888888 not found"],
    ["an image used as audio", (image: string) => avatarRequest(image, image), "is an image, audio expected"],
    [
      "audio used as the source",
      (_image: string, audio: string) => avatarRequest(audio, audio),
      "is audio, image expected",
    ],
  ])("%s makes the task Fail with a reason", async (_name, build, reason) => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const image = idOf(await api.upload(await fixture("tiny.jpg")));
      const audio = idOf(await api.upload(await fixture("tiny.mp3")));
      const res = await api.call("POST", "/v1/generations", { body: build(image, audio) });
      expect(res.status).toBe(200);
      const final = await api.waitForFinal(idOf(res));
      expect(final.json.status).toBe("Fail");
      expect(final.json.failReason).toContain(reason);
      expect(final.json.resultVideoURL).toBeUndefined();
      expect(api.sandbox.counters.unfinished).toBe(0);
    });
  });
});

describe("credits", () => {
  test("402 when the balance cannot cover the seconds; setCredits tops up", async () => {
    await withSandbox({ credits: 12, timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const ten = actorRequest({ chunks: [{ duration: 10, conditions: [{ type: "text", content: "a" }] }] });
      expect((await api.call("POST", "/v1/generations", { body: ten })).status).toBe(200);
      expect(api.sandbox.credits()).toBe(2);
      const refused = await api.call("POST", "/v1/generations", { body: ten });
      expect(refused.status).toBe(402);
      expect(refused.json.detail).toMatch(/^Insufficient credits: /);
      expect(api.sandbox.counters.generationsCreated).toBe(1);

      api.sandbox.setCredits(10);
      expect((await api.call("POST", "/v1/generations", { body: ten })).status).toBe(200);
      expect(api.sandbox.credits()).toBe(0);
      // An exhausted account is refused speech too, although speech is free.
      expect((await api.call("POST", "/v1/audios", { body: { voiceId: 1, text: "hi" } })).status).toBe(402);
      api.sandbox.setCredits(undefined);
      expect((await api.call("POST", "/v1/generations", { body: ten })).status).toBe(200);
    });
  });

  test("a failed task gives its credits back", async () => {
    // PreProcessing long enough to see the charge before the failure refunds it.
    await withSandbox({ credits: 5, timeScale: 0, preProcessingMs: 200 }, async (api) => {
      const res = await api.call("POST", "/v1/generations", {
        body: actorRequest({ source: { type: "image", content: 4242 } }),
      });
      expect(api.sandbox.credits()).toBe(0);
      expect((await api.waitForFinal(idOf(res))).json.status).toBe("Fail");
      expect(api.sandbox.credits()).toBe(5);
    });
  });
});

describe("ids and counters", () => {
  test("bigIds hands out exact ids above 2^53 in every response", async () => {
    // Tasks stay in PreProcessing while both are submitted, so no result id is handed out in between.
    await withSandbox({ bigIds: true, timeScale: 0, preProcessingMs: 150 }, async (api) => {
      const audio = await api.call("POST", "/v1/audios", { body: { voiceId: 1, text: "hi" } });
      expect(audio.text).toMatch(/^\{"id":1800000000000000001,/);
      const image = await api.upload(await fixture("tiny.png"));
      expect(image.text).toBe('{"id":1800000000000000002}');
      const created = await api.call("POST", "/v1/generations", {
        body: avatarRequest("1800000000000000002", "1800000000000000001"),
      });
      expect(created.text).toBe('{"id":1800000000000000003}');
      // Integer ids in the request body are read losslessly too.
      const raw = await api.call("POST", "/v1/generations", {
        body:
          '{"model":"avatar-h1","source":{"type":"image","content":1800000000000000002},' +
          '"chunks":[{"duration":5,"conditions":[{"type":"audio","content":1800000000000000001}]}]}',
      });
      const final = await api.waitForFinal(idOf(raw));
      expect(final.text).toContain('"id":1800000000000000004');
      expect(final.text).toMatch(/"resultVideoId":18000000000000000\d\d/);
      expect(final.json.status).toBe("Success");
      expect((await api.call("GET", "/v1/assets/1800000000000000002")).text).toContain(
        '"id":1800000000000000002',
      );
      expect((await api.call("GET", "/v1/assets/1800000000000000000")).status).toBe(404);
    });
  });

  test("duplicate generations are counted by canonical body, polls per task", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const a = await api.call("POST", "/v1/generations", { body: actorRequest() });
      // Same request, keys in another order.
      const reordered = Object.fromEntries(Object.entries(actorRequest()).reverse());
      await api.call("POST", "/v1/generations", { body: reordered });
      await api.call("POST", "/v1/generations", { body: actorRequest({ seed: 9 }) });
      const counters = api.sandbox.counters;
      expect(counters.generationsCreated).toBe(3);
      expect(counters.duplicateGenerations()).toBe(1);
      await api.waitForFinal(idOf(a));
      expect(counters.pollsByTask.get(idOf(a))).toBeGreaterThanOrEqual(1);
      expect(counters.requestCount("POST", "/v1/generations", 200)).toBe(3);
      expect(counters.requestCount("POST", "/v1/generations")).toBe(3);
    });
  });
});
