// Uploads are judged by content: every accepted format goes in, text and broken files are refused
// with the list of accepted formats; an asset can be read and deleted, and a deleted one is gone.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { request } from "undici";
import { describe, expect, test } from "vitest";
import { avatarRequest, fixture, idOf, withSandbox } from "./helpers.js";

const FORMATS = [
  "tiny.png",
  "tiny.jpg",
  "tiny.gif",
  "tiny.webp",
  "tiny.wav",
  "tiny.mp3",
  "tiny.ogg",
] as const;

describe("uploads", () => {
  test.each(FORMATS)("%s is accepted and served back byte for byte", async (name) => {
    await withSandbox({}, async (api) => {
      const bytes = await fixture(name);
      // A misleading file name must not matter: the content decides.
      const res = await api.upload(bytes, "renamed.txt");
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.json)).toEqual(["id"]);
      const info = await api.call("GET", `/v1/assets/${idOf(res)}`);
      expect(info.status).toBe(200);
      expect(info.json.id).toBe(Number(idOf(res)));
      const served = Buffer.from(await (await fetch(info.json.url)).arrayBuffer());
      expect(served.equals(bytes)).toBe(true);
    });
  });

  test("the result MP4 fixture is accepted as an upload", async () => {
    await withSandbox({}, async (api) => {
      const bytes = await fixture("../../../assets/sandbox/result.mp4");
      expect((await api.upload(bytes, "clip.mp4")).status).toBe(200);
    });
  });

  test.each([
    [
      "a text file",
      Buffer.from("hello, this is not a picture\n"),
      /unsupported file format: accepted are JPEG, PNG/,
    ],
    ["an empty file", Buffer.alloc(0), /empty/],
  ])("%s is refused with 422", async (_name, bytes, msg) => {
    await withSandbox({}, async (api) => {
      const res = await api.upload(bytes, "x.png");
      expect(res.status).toBe(422);
      expect(res.json.detail[0].loc).toEqual(["body", "file"]);
      expect(res.json.detail[0].msg).toMatch(msg);
      expect(api.sandbox.counters.uploadsByHash.size).toBe(0);
    });
  });

  test.each([
    ["tiny.png", 60],
    ["tiny.jpg", 150],
    ["tiny.wav", 4000],
    ["tiny.gif", 500],
    ["../../../assets/sandbox/result.mp4", 5000],
  ])("a truncated %s is refused as corrupted", async (name, keep) => {
    await withSandbox({}, async (api) => {
      const bytes = (await fixture(name)).subarray(0, keep);
      const res = await api.upload(bytes, "cut");
      expect(res.status, res.text).toBe(422);
      expect(res.json.detail[0].msg).toMatch(/^corrupted or truncated/);
    });
  });

  test("a request that is not multipart, or has no file part, is 422", async () => {
    await withSandbox({}, async (api) => {
      const json = await api.call("POST", "/v1/assets", { body: { file: "x" } });
      expect(json.status).toBe(422);
      const form = new FormData();
      form.append("other", "value");
      const res = await fetch(`${api.sandbox.baseUrl}/v1/assets`, {
        method: "POST",
        headers: { authorization: `Bearer ${api.sandbox.apiKey}` },
        body: form,
      });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(body.detail[0]?.loc).toEqual(["body", "file"]);
    });
  });

  test("uploads are counted per content hash", async () => {
    await withSandbox({}, async (api) => {
      const png = await fixture("tiny.png");
      await api.upload(png, "a.png");
      await api.upload(png, "b.png");
      await api.upload(await fixture("tiny.jpg"), "c.jpg");
      const hash = createHash("sha256").update(png).digest("hex");
      expect(api.sandbox.counters.uploadsByHash.get(hash)).toBe(2);
      expect(api.sandbox.counters.duplicateUploads()).toBe(1);
    });
  });

  test("a 100 MB upload streams to disk without holding it in memory", async () => {
    await withSandbox({}, async (api) => {
      const size = 100 * 1024 * 1024;
      const block = Buffer.alloc(1024 * 1024);
      const boundary = "----reel-test-boundary";
      // A valid MP4 box layout: ftyp, an empty moov, then one big mdat.
      const head = Buffer.alloc(36);
      head.writeUInt32BE(20, 0);
      head.write("ftypisom", 4, "latin1");
      head.writeUInt32BE(8, 20);
      head.write("moov", 24, "latin1");
      head.writeUInt32BE(8 + size, 28);
      head.write("mdat", 32, "latin1");
      async function* body() {
        yield Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\n` +
            "Content-Type: video/mp4\r\n\r\n",
        );
        yield head;
        for (let sent = 0; sent < size; sent += block.length) yield block;
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      }
      const before = process.memoryUsage().rss;
      const res = await request(`${api.sandbox.baseUrl}/v1/assets`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${api.sandbox.apiKey}`,
          "content-type": `multipart/form-data; boundary=${boundary}`,
        },
        body: Readable.from(body()),
      });
      const text = await res.body.text();
      expect(res.statusCode, text).toBe(200);
      expect(process.memoryUsage().rss - before).toBeLessThan(60 * 1024 * 1024);
    });
  });
});

describe("asset lifecycle", () => {
  test("GET, DELETE, then the id is gone everywhere", async () => {
    await withSandbox({ timeScale: 0, preProcessingMs: 0 }, async (api) => {
      const image = idOf(await api.upload(await fixture("tiny.png")));
      const audio = idOf(await api.upload(await fixture("tiny.wav")));
      const info = await api.call("GET", `/v1/assets/${image}`);
      const url: string = info.json.url;

      const deleted = await api.call("DELETE", `/v1/assets/${image}`);
      expect(deleted.status).toBe(200);
      expect(deleted.json).toEqual({ id: Number(image) });
      expect((await api.call("GET", `/v1/assets/${image}`)).status).toBe(404);
      expect((await api.call("DELETE", `/v1/assets/${image}`)).status).toBe(404);
      expect((await fetch(url)).status).toBe(404);

      const task = idOf(await api.call("POST", "/v1/generations", { body: avatarRequest(image, audio) }));
      const final = await api.waitForFinal(task);
      expect(final.json.status).toBe("Fail");
      expect(final.json.failReason).toBe(`asset ${image} was deleted`);
    });
  });
});
