// The client against the real sandbox over real HTTP on 127.0.0.1: every endpoint, every error type,
// the retry rules (and above all: a costed call is never sent twice after an ambiguous failure).

import { copyFile, open } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { makeClient, type ServiceClient } from "../../src/client/index.js";
import {
  AuthError,
  CreditsError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  RateLimitError,
  TimeoutError,
  ValidationError,
} from "../../src/errors/service.js";
import { makeLogger } from "../../src/log/logger.js";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";
import type { GenerationRequest } from "../../src/service-contract/api-types.js";
import { tempDir } from "../helpers/temp-dir.js";

const FIXTURES = new URL("../sandbox/fixtures/", import.meta.url);
const fixture = (name: string): string => new URL(name, FIXTURES).pathname;

const open_: { sandbox?: Sandbox; client?: ServiceClient; servers: Server[] } = { servers: [] };

afterEach(async () => {
  await open_.client?.close();
  await open_.sandbox?.close();
  for (const server of open_.servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  open_.client = undefined;
  open_.sandbox = undefined;
});

async function setup(
  options: SandboxOptions = {},
  clientOptions: Partial<Parameters<typeof makeClient>[0]> = {},
): Promise<{ sandbox: Sandbox; client: ServiceClient }> {
  const sandbox = await startSandbox({ timeScale: 0.005, preProcessingMs: 5, ...options });
  const client = makeClient({
    baseUrl: sandbox.baseUrl,
    apiKey: sandbox.apiKey,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    ...clientOptions,
  });
  open_.sandbox = sandbox;
  open_.client = client;
  return { sandbox, client };
}

function actorRequest(extra: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    model: "actor-2",
    resolution: "720p",
    aspectRatio: "16:9",
    chunks: [{ duration: 5, conditions: [{ type: "text", content: "a calm presenter waves" }] }],
    ...extra,
  };
}

async function waitForFinal(client: ServiceClient, id: string) {
  for (let i = 0; i < 500; i++) {
    const task = await client.getGeneration(id);
    if (task.status === "Success" || task.status === "Fail") return task;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("task did not finish");
}

describe("endpoints", () => {
  it("uploads, reads and deletes an asset; a deleted asset is not found", async () => {
    const { client } = await setup();
    const { id } = await client.uploadAsset(fixture("tiny.png"));
    expect(id).toMatch(/^\d+$/);
    const asset = await client.getAsset(id);
    expect(asset.id).toBe(id);
    expect(asset.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(await client.deleteAsset(id)).toEqual({ id });
    await expect(client.getAsset(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("creates speech and uses it in an avatar generation that succeeds", async () => {
    const { client } = await setup();
    const speech = await client.createSpeech({ voiceId: "17", text: "Welcome to the spring collection." });
    expect(speech.duration).toBeGreaterThan(0);
    const image = await client.uploadAsset(fixture("tiny.png"));
    const { id } = await client.submitGeneration({
      model: "avatar-h1",
      resolution: "540p",
      aspectRatio: "1:1",
      source: { type: "image", content: image.id },
      chunks: [{ duration: 3, conditions: [{ type: "audio", content: speech.id }] }],
    });
    const task = await waitForFinal(client, id);
    expect(task.status).toBe("Success");
    expect(task.resultVideoURL).toMatch(/^http/);
    expect(task.resultVideoId).toMatch(/^\d+$/);
  });

  it("reports the service's reason when a task fails", async () => {
    const { client } = await setup();
    const { id } = await client.submitGeneration(
      actorRequest({ source: { type: "image", content: "999999" } }),
    );
    const task = await waitForFinal(client, id);
    expect(task.status).toBe("Fail");
    expect(task.failReason).toMatch(/999999/);
  });

  it("keeps ids above 2^53 exact through a round trip", async () => {
    const { client } = await setup({ bigIds: true });
    const { id } = await client.uploadAsset(fixture("tiny.png"));
    expect(id).toBe("1800000000000000001");
    expect((await client.getAsset(id)).id).toBe("1800000000000000001");
    const task = await client.submitGeneration(actorRequest({ source: { type: "image", content: id } }));
    expect(BigInt(task.id)).toBeGreaterThan(2n ** 53n);
    const final = await waitForFinal(client, task.id);
    expect(final.id).toBe(task.id);
    expect(final.status).toBe("Success"); // the source id reached the service intact
  });
});

describe("errors", () => {
  it("a rejected key is an AuthError whose message does not contain the key", async () => {
    const { sandbox } = await setup();
    const wrong = "sk-wrong-key-0123456789";
    const client = makeClient({ baseUrl: sandbox.baseUrl, apiKey: wrong });
    const error = await client.getAsset("1").catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).status).toBe(401);
    expect((error as Error).message).not.toContain(wrong);
    expect((error as Error).message).toContain("REEL_API_KEY");
  });

  it("a 422 is a ValidationError with field paths and the service's message", async () => {
    const { client, sandbox } = await setup();
    const error = await client
      .submitGeneration(actorRequest({ resolution: "540p" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const issues = (error as ValidationError).issues;
    expect(issues.map((i) => i.path)).toContain("body.resolution");
    expect((error as Error).message).toMatch(/720p or 1080p/);
    expect(sandbox.counters.generationsCreated).toBe(0);
  });

  it("exhausted credits are a CreditsError", async () => {
    const { client } = await setup({ credits: 3 });
    const error = await client.submitGeneration(actorRequest()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CreditsError);
    expect((error as Error).message).toMatch(/credits/i);
  });

  it("a refused connection is a NetworkError that was not sent, even for a costed call", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r)); // nothing listens there now
    const client = makeClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    });
    const error = await client.submitGeneration(actorRequest()).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).sent).toBe(false);
  });

  it("https to a plain-http server fails the handshake: not sent, said on one line", async () => {
    const server = createServer((_req, res) => res.end("{}"));
    open_.servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const client = makeClient({
      baseUrl: `https://127.0.0.1:${port}`,
      apiKey: "k",
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    });
    const error = await client.submitGeneration(actorRequest()).catch((e: unknown) => e);
    await client.close();
    // Never "outcome unknown": nothing could have been paid for.
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).sent).toBe(false);
    expect((error as Error).message).toContain("the server does not speak TLS (is it plain http?)");
    expect((error as Error).message).not.toContain("\n");
  });

  it("a server that never answers gives a TimeoutError; a costed call then has an unknown outcome", async () => {
    const server = createServer(() => {}); // accepts and never answers
    open_.servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const client = makeClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      timeouts: { headersMs: 100 },
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    });
    const read = await client.getGeneration("1").catch((e: unknown) => e);
    const costed = await client.submitGeneration(actorRequest()).catch((e: unknown) => e);
    await client.close();
    expect(read).toBeInstanceOf(TimeoutError);
    expect(costed).toBeInstanceOf(OutcomeUnknownError);
  });
});

describe("retries", () => {
  it("honours Retry-After on 429 and then succeeds", async () => {
    const { client, sandbox } = await setup({
      faults: { seed: 3, rate429: 1, retryAfterSeconds: 0.3, routes: ["GET /v1/assets/:id"] },
    });
    const { id } = await client.uploadAsset(fixture("tiny.png"));
    sandbox.setFaults({ seed: 3, rate429: 0.5, retryAfterSeconds: 0.3, routes: ["GET /v1/assets/:id"] });
    const started = Date.now();
    for (let i = 0; i < 6; i++) await client.getAsset(id);
    const limited = sandbox.counters.requestCount("GET", "/v1/assets/:id", 429);
    expect(limited).toBeGreaterThan(0);
    // Each 429 was followed by a wait of at least its Retry-After.
    expect(Date.now() - started).toBeGreaterThanOrEqual(limited * 300 - 20);
  });

  it("retries a GET after 503 and a dropped connection", async () => {
    const { client, sandbox } = await setup(
      {},
      { retry: { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 5 } },
    );
    const { id } = await client.submitGeneration(actorRequest());
    sandbox.setFaults({
      seed: 7,
      rate503: 0.3,
      rateDrop: 0.3,
      retryAfterSeconds: 0,
      routes: ["GET /v1/generations/:id"],
    });
    for (let i = 0; i < 20; i++) expect((await client.getGeneration(id)).id).toBe(id);
    expect(sandbox.counters.requestCount("GET", "/v1/generations/:id", 503)).toBeGreaterThan(0);
    expect(sandbox.counters.requestCount("GET", "/v1/generations/:id", "drop")).toBeGreaterThan(0);
  });

  it("never resubmits a generation after an ambiguous 500: the outcome is unknown", async () => {
    const { client, sandbox } = await setup({
      faults: { rate500AfterEffect: 1, routes: ["POST /v1/generations"] },
    });
    const error = await client.submitGeneration(actorRequest()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(sandbox.counters.generationsCreated).toBe(1);
    expect(sandbox.counters.requestCount("POST", "/v1/generations")).toBe(1);
  });

  it("retries a submission refused with 429 or 503 (no effect) and creates it once", async () => {
    const { client, sandbox } = await setup({
      faults: {
        seed: 11,
        rate429: 0.2,
        rate503: 0.2,
        retryAfterSeconds: 0,
        routes: ["POST /v1/generations"],
      },
    });
    for (let i = 0; i < 10; i++) await client.submitGeneration(actorRequest({ seed: i }));
    expect(sandbox.counters.generationsCreated).toBe(10);
    expect(sandbox.counters.duplicateGenerations()).toBe(0);
    const refused =
      sandbox.counters.requestCount("POST", "/v1/generations", 429) +
      sandbox.counters.requestCount("POST", "/v1/generations", 503);
    expect(refused).toBeGreaterThan(0);
  });

  it("gives up on a long Retry-After instead of sleeping through it", async () => {
    const { client } = await setup(
      { faults: { rate429: 1, retryAfterSeconds: 120, routes: ["GET /v1/generations/:id"] } },
      { retry: { maxRetryAfterMs: 1_000 } },
    );
    const started = Date.now();
    const error = await client.getGeneration("1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe("resources", () => {
  it("streams a 200 MB upload: RSS grows by less than half the file", async () => {
    const { client, sandbox } = await setup();
    const dir = await tempDir();
    const path = join(dir, "big.wav");
    const size = 200 * 1024 * 1024;
    const header = Buffer.alloc(44);
    header.write("RIFF", 0, "latin1");
    header.writeUInt32LE(size - 8, 4);
    header.write("WAVEfmt ", 8, "latin1");
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(16000, 24);
    header.writeUInt32LE(32000, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write("data", 36, "latin1");
    header.writeUInt32LE(size - 44, 40);
    const file = await open(path, "w");
    await file.write(header, 0, 44, 0);
    await file.truncate(size); // the rest reads as zeros: silence
    await file.close();

    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const { id } = await client.uploadAsset(path);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(id).toMatch(/^\d+$/);
    expect(sandbox.counters.uploadsByHash.size).toBe(1);
    // Buffered, the upload would add the file's 200 MB. Streamed, it adds a few: the rest is the
    // collector's own growth in a worker that ran other test files before (up to 50 MB was seen).
    expect(peak - before).toBeLessThan(100 * 1024 * 1024);
  }, 60_000);

  it("never writes the key to the log, even at debug level and in errors", async () => {
    const { sandbox } = await setup({ faults: { seed: 5, rate503: 0.5, retryAfterSeconds: 0 } });
    let output = "";
    const destination = new Writable({
      write(chunk, _encoding, done) {
        output += String(chunk);
        done();
      },
    });
    const logger = makeLogger({ level: "debug", secrets: [sandbox.apiKey], destination });
    const client = makeClient({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      logger,
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    const dir = await tempDir();
    await copyFile(fixture("tiny.png"), join(dir, "a.png"));
    const { id } = await client.uploadAsset(join(dir, "a.png"));
    await client.getAsset(id);
    await client.getGeneration("424242").catch(() => {});
    // Whatever a careless caller logs, the key does not come out.
    logger.debug({ apiKey: sandbox.apiKey, headers: { authorization: `Bearer ${sandbox.apiKey}` } }, "oops");
    logger.error(new Error(`failed with key ${sandbox.apiKey}`));
    await client.close();
    logger.flush();
    await new Promise((r) => setTimeout(r, 20));
    expect(output).toContain("call ok");
    expect(output).toContain("oops");
    expect(output).not.toContain(sandbox.apiKey);
  });
});
