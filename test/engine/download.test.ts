// The downloader's safety rules, each against a real HTTP server on loopback that misbehaves on
// purpose: a video lands whole under its name or not at all, whatever the server does.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
// Loaded first, as in the report's browser test: importing playwright-core leaves an older undici's
// Agent as the process's global dispatcher (any early use of Node's fetch does the same), and its
// dispatch API refuses reel's handlers. Every download below must work regardless.
import "playwright-core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { makeDispatcher } from "../../src/client/transport.js";
import { downloadVideo } from "../../src/output/download.js";
import { DownloadError } from "../../src/errors/output.js";
import { REPO } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const SMALL = readFileSync(join(REPO, "assets", "sandbox", "result.mp4"));
/** Bigger than what the downloader keeps in memory before writing (several writes). */
const LARGE = Buffer.concat([SMALL.subarray(0, 32), Buffer.alloc(5 * 1024 * 1024, 7)]);

/** What downloadVideo returns for `body`: its size and SHA-256, hashed as it was written. */
const saved = (body: Buffer) => ({
  size: body.length,
  sha256: createHash("sha256").update(body).digest("hex"),
});

interface Seen {
  readonly url: string;
  readonly range: string | undefined;
  readonly authorization: string | undefined;
}

/** The connections of this file's downloads, as a session's (the CLI makes one per command). */
const dispatcher = makeDispatcher();
afterAll(() => dispatcher.close());

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((resolve) => s.close(resolve));
    }),
  );
});

/** A server on 127.0.0.1 answering with `handle`; `seen` lists its requests in order. */
async function serve(
  handle: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", range: req.headers.range, authorization: req.headers.authorization });
    handle(req, res, seen.length);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const video = (body: Buffer) => (_req: IncomingMessage, res: ServerResponse) =>
  res.writeHead(200, { "content-type": "video/mp4", "content-length": body.length }).end(body);

async function download(origin: string, extra: Partial<Parameters<typeof downloadVideo>[0]> = {}) {
  const dir = await tempDir();
  const dest = join(dir, "v.mp4");
  const result = downloadVideo({ url: `${origin}/v.mp4`, dest, httpOrigins: [origin], dispatcher, ...extra });
  return { dir, dest, result };
}

async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DownloadError);
  return error as DownloadError;
}

describe("downloadVideo", () => {
  it.each([
    ["a small video", SMALL],
    ["a video of several megabytes", LARGE],
  ])("saves %s whole under its name, leaves no temp file, sends no API key", async (_name, body) => {
    const { origin, seen } = await serve(video(body));
    const { dir, dest, result } = await download(origin);
    expect(await result).toEqual(saved(body));
    expect((await readFile(dest)).equals(body)).toBe(true);
    expect(await readdir(dir)).toEqual(["v.mp4"]);
    expect(seen.map((s) => s.authorization)).toEqual([undefined]);
  });

  it("refuses an HTML error page served with 200, and leaves nothing", async () => {
    const page = Buffer.from("<!doctype html><title>Sign in</title>".padEnd(2000, " "));
    const { origin } = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(page),
    );
    const { dir, result } = await download(origin);
    const error = await failure(result);
    expect(error.failure).toBe("refused");
    expect(error.message).toMatch(/did not serve an MP4 video \(got text\/html\)/);
    expect(await readdir(dir)).toEqual([]);
  });

  it("refuses a body over the size cap, whether its length is announced or not", async () => {
    const announced = await serve(video(LARGE));
    const first = await download(announced.origin, { maxBytes: 1024 * 1024 });
    expect((await failure(first.result)).message).toMatch(/larger than the 1048576-byte limit/);
    expect(await readdir(first.dir)).toEqual([]);

    // No Content-Length: the cap is enforced while streaming.
    const streamed = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4" });
      res.end(LARGE);
    });
    const second = await download(streamed.origin, { maxBytes: 1024 * 1024 });
    expect((await failure(second.result)).message).toMatch(/larger than the 1048576-byte limit/);
    expect(await readdir(second.dir)).toEqual([]);
  });

  it("follows a redirect within a trusted origin, never to plain http elsewhere", async () => {
    const elsewhere = await serve(video(SMALL));
    const { origin, seen } = await serve((req, res) => {
      if (req.url === "/v.mp4") res.writeHead(302, { location: "/moved.mp4" }).end();
      else if (req.url === "/moved.mp4") video(SMALL)(req, res);
      else res.writeHead(302, { location: `${elsewhere.origin}/v.mp4` }).end();
    });
    const followed = await download(origin);
    expect(await followed.result).toEqual(saved(SMALL));
    expect(seen.map((s) => s.url)).toEqual(["/v.mp4", "/moved.mp4"]);

    const refused = await download(origin, { url: `${origin}/away` });
    expect((await failure(refused.result)).message).toMatch(/only https addresses are fetched/);
    expect(elsewhere.seen).toEqual([]);
    expect(await readdir(refused.dir)).toEqual([]);
  });

  it("gives up on a redirect loop", async () => {
    const { origin } = await serve((_req, res) => res.writeHead(302, { location: "/v.mp4" }).end());
    const { result } = await download(origin);
    expect((await failure(result)).message).toMatch(/too many redirects/);
  });

  it.each([403, 404, 410])(
    "reports an address answering %i as expired, without retrying it",
    async (status) => {
      const { origin, seen } = await serve((_req, res) => res.writeHead(status).end("gone"));
      const { dir, result } = await download(origin);
      expect((await failure(result)).expired).toBe(true);
      expect(seen).toHaveLength(1);
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it("resumes a broken transfer with a Range request", async () => {
    const cut = 3 * 1024 * 1024;
    const { origin, seen } = await serve((req, res, n) => {
      if (n === 1) {
        res.writeHead(200, { "content-type": "video/mp4", "content-length": LARGE.length });
        res.write(LARGE.subarray(0, cut), () => res.destroy());
        return;
      }
      const from = Number(/bytes=(\d+)-/.exec(req.headers.range ?? "")?.[1]);
      res
        .writeHead(206, {
          "content-length": LARGE.length - from,
          "content-range": `bytes ${from}-${LARGE.length - 1}/${LARGE.length}`,
        })
        .end(LARGE.subarray(from));
    });
    const { dir, dest, result } = await download(origin);
    expect(await result).toEqual(saved(LARGE));
    expect((await readFile(dest)).equals(LARGE)).toBe(true);
    expect(seen[0]!.range).toBeUndefined();
    const resumedAt = Number(/bytes=(\d+)-/.exec(seen[1]!.range ?? "")?.[1]);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThanOrEqual(cut);
    expect(await readdir(dir)).toEqual(["v.mp4"]);
  });

  it("starts over when the server ignores the Range request", async () => {
    const { origin, seen } = await serve((_req, res, n) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": LARGE.length });
      if (n === 1) res.write(LARGE.subarray(0, 2 * 1024 * 1024), () => res.destroy());
      else res.end(LARGE);
    });
    const { dest, result } = await download(origin);
    expect(await result).toEqual(saved(LARGE));
    expect((await readFile(dest)).equals(LARGE)).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it("tries again after a 503 and a body shorter than announced", async () => {
    const { origin, seen } = await serve((req, res, n) => {
      if (n === 1) res.writeHead(503).end("busy");
      else if (n === 2) {
        // Announces more than it sends, then ends the connection: a truncated body.
        res.writeHead(200, { "content-length": SMALL.length + 100 });
        res.write(SMALL, () => res.destroy());
      } else video(SMALL)(req, res);
    });
    const { dest, result } = await download(origin);
    expect(await result).toEqual(saved(SMALL));
    expect((await readFile(dest)).equals(SMALL)).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(3);
  });

  it("appends only the range it asked for: a capped range goes on, another range starts over", async () => {
    const MiB = 1024 * 1024;
    const slice = (res: ServerResponse, from: number, to: number) =>
      res
        .writeHead(206, {
          "content-range": `bytes ${from}-${to - 1}/${LARGE.length}`,
          "content-length": to - from,
        })
        .end(LARGE.subarray(from, to));
    // A server that hands out at most 1 MiB per request, starting with a plain GET.
    const capped = await serve((req, res) => {
      const from = Number(/bytes=(\d+)-/.exec(req.headers.range ?? "")?.[1] ?? 0);
      slice(res, from, Math.min(LARGE.length, from + MiB));
    });
    const first = await download(capped.origin);
    expect(await first.result).toEqual(saved(LARGE));
    expect((await readFile(first.dest)).equals(LARGE)).toBe(true);
    expect(capped.seen.length).toBe(Math.ceil(LARGE.length / MiB));

    // A transfer broken after 2 MiB, then answered from byte 0 with 206: that part is not appended.
    const restarted = await serve((_req, res, n) => {
      if (n === 1) {
        res.writeHead(200, { "content-length": LARGE.length });
        res.write(LARGE.subarray(0, 2 * MiB), () => res.destroy());
      } else if (n === 2) slice(res, 0, LARGE.length);
      else video(LARGE)(_req, res);
    });
    const second = await download(restarted.origin);
    expect(await second.result).toEqual(saved(LARGE));
    expect((await readFile(second.dest)).equals(LARGE)).toBe(true);
    expect(restarted.seen.at(-1)?.range).toBeUndefined(); // started over with the whole video
  });

  it("accepts an MP4 whose first bytes arrive in a chunk shorter than its signature", async () => {
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": SMALL.length });
      res.flushHeaders();
      setTimeout(() => res.write(SMALL.subarray(0, 4)), 30);
      setTimeout(() => res.end(SMALL.subarray(4)), 80);
    });
    const { dest, result } = await download(origin);
    expect(await result).toEqual(saved(SMALL));
    expect((await readFile(dest)).equals(SMALL)).toBe(true);
  });

  it("leaves no temp file when the video cannot take its name", async () => {
    const { origin } = await serve(video(SMALL));
    const dir = await tempDir();
    await mkdir(join(dir, "v.mp4", "taken"), { recursive: true }); // a folder where the video should go
    await expect(
      downloadVideo({ url: `${origin}/v.mp4`, dest: join(dir, "v.mp4"), httpOrigins: [origin], dispatcher }),
    ).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["v.mp4"]);
  });

  it("follows a redirect whose body never ends", async () => {
    const { origin } = await serve((req, res) => {
      if (req.url === "/moved.mp4") return video(SMALL)(req, res);
      res.writeHead(302, { location: "/moved.mp4" });
      const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024, 32)), 1);
      res.on("close", () => clearInterval(timer));
    });
    const { dest, result } = await download(origin);
    expect(await result).toEqual(saved(SMALL));
    expect((await readFile(dest)).equals(SMALL)).toBe(true);
  });

  it("completes a download whose every byte arrived when the server answers the resume with 416", async () => {
    const { origin, seen } = await serve((req, res, n) => {
      if (n === 1) {
        // All of the video, chunked, but the connection ends before the last chunk marker.
        res.writeHead(200, { "content-type": "video/mp4" });
        res.write(SMALL, () => res.destroy());
        return;
      }
      res.writeHead(416, { "content-range": `bytes */${SMALL.length}` }).end();
      expect(req.headers.range).toBe(`bytes=${SMALL.length}-`);
    });
    const { dest, result } = await download(origin);
    expect(await result).toEqual(saved(SMALL));
    expect((await readFile(dest)).equals(SMALL)).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it("refuses a redirect to an address that is not one, without trying again", async () => {
    const { origin, seen } = await serve((_req, res) =>
      res.writeHead(302, { location: "http://[bad" }).end(),
    );
    const { result } = await download(origin);
    const error = await failure(result);
    expect(error.failure).toBe("refused");
    expect(error.message).toMatch(/redirected to an invalid address/);
    expect(seen).toHaveLength(1);
  });

  it("stops when aborted mid-transfer and leaves nothing behind", async () => {
    const controller = new AbortController();
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": LARGE.length });
      res.write(LARGE.subarray(0, 1024 * 1024), () => controller.abort(new Error("stopped by the test")));
    });
    const { dir, result } = await download(origin, { signal: controller.signal });
    await expect(result).rejects.toThrow();
    expect(await readdir(dir)).toEqual([]);
  });
});
