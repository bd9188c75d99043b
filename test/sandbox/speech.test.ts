// POST /v1/audios makes a real WAV of plausible length, stored as an audio asset that a
// generation can use.
import { describe, expect, test } from "vitest";
import { speechSeconds } from "../../src/sandbox/index.js";
import { avatarRequest, fixture, idOf, withSandbox } from "./helpers.js";

function readWav(bytes: Buffer): { channels: number; sampleRate: number; bits: number; seconds: number } {
  expect(bytes.toString("latin1", 0, 4)).toBe("RIFF");
  expect(bytes.toString("latin1", 8, 12)).toBe("WAVE");
  expect(bytes.readUInt32LE(4) + 8).toBe(bytes.length);
  expect(bytes.toString("latin1", 12, 16)).toBe("fmt ");
  expect(bytes.toString("latin1", 36, 40)).toBe("data");
  const channels = bytes.readUInt16LE(22);
  const sampleRate = bytes.readUInt32LE(24);
  const bits = bytes.readUInt16LE(34);
  const dataBytes = bytes.readUInt32LE(40);
  return { channels, sampleRate, bits, seconds: dataBytes / (sampleRate * channels * (bits / 8)) };
}

describe("speech", () => {
  test("returns id, duration and url of a real WAV of plausible length", async () => {
    await withSandbox({}, async (api) => {
      const text = "Welcome to the spring collection, made for warm days and long evenings.";
      const res = await api.call("POST", "/v1/audios", { body: { voiceId: 17, text } });
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.json).sort()).toEqual(["duration", "id", "url"]);
      const wav = readWav(Buffer.from(await (await fetch(res.json.url)).arrayBuffer()));
      expect(wav).toMatchObject({ channels: 1, sampleRate: 16000, bits: 16 });
      expect(wav.seconds).toBeCloseTo(res.json.duration, 3);
      // 12 words at about 2.5 words a second.
      expect(res.json.duration).toBeGreaterThan(3);
      expect(res.json.duration).toBeLessThan(8);
      expect(api.sandbox.counters.speechByInput.get(`17:${text}`)).toBe(1);
    });
  });

  test("short texts last at least a second; voice ids may be numeric strings", async () => {
    expect(speechSeconds("Hi")).toBe(1);
    expect(speechSeconds("one two three four five six seven eight nine ten")).toBe(4);
    await withSandbox({}, async (api) => {
      const res = await api.call("POST", "/v1/audios", {
        body: { voiceId: "1800000000000000001", text: "Hi" },
      });
      expect(res.status).toBe(200);
      expect(res.json.duration).toBe(1);
    });
  });

  test.each([
    [{ text: "hi" }, ["body", "voiceId"], "missing"],
    [{ voiceId: "abc", text: "hi" }, ["body", "voiceId"], "int_type"],
    [{ voiceId: 3 }, ["body", "text"], "missing"],
    [{ voiceId: 3, text: "" }, ["body", "text"], "string_too_short"],
    [{ voiceId: 3, text: 5 }, ["body", "text"], "string_type"],
    [{ voiceId: 3, text: "x".repeat(5001) }, ["body", "text"], "string_too_long"],
  ])("bad input %j is 422", async (body, loc, type) => {
    await withSandbox({}, async (api) => {
      const res = await api.call("POST", "/v1/audios", { body });
      expect(res.status).toBe(422);
      expect(res.json.detail).toContainEqual(expect.objectContaining({ loc, type }));
    });
  });

  test("the speech asset works as the audio of an avatar generation", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const image = idOf(await api.upload(await fixture("tiny.png")));
      const speech = idOf(
        await api.call("POST", "/v1/audios", { body: { voiceId: 4, text: "Hello there" } }),
      );
      const task = idOf(await api.call("POST", "/v1/generations", { body: avatarRequest(image, speech) }));
      expect((await api.waitForFinal(task)).json.status).toBe("Success");
    });
  });
});
