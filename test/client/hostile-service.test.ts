// The client against a service that misbehaves on purpose (a node:http server on 127.0.0.1): answers
// with statuses that prove nothing, bodies that never end or drip, ids that cannot be, a key echoed
// back, certificates not to be trusted. Issue 15.
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeClient, type ServiceClient } from "../../src/client/index.js";
import {
  AuthError,
  CreditsError,
  NetworkError,
  OutcomeUnknownError,
  ProtocolError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
} from "../../src/errors/service.js";
import type { GenerationRequest } from "../../src/service-contract/api-types.js";
import { REPO } from "../helpers/cli.js";
import { json, useHostileServers } from "../helpers/hostile-server.js";
import { tempDir } from "../helpers/temp-dir.js";

const hostile = useHostileServers();
const clients: ServiceClient[] = [];
const httpsServers: HttpsServer[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const server of httpsServers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function client(baseUrl: string, extra: Partial<Parameters<typeof makeClient>[0]> = {}): ServiceClient {
  const c = makeClient({ baseUrl, apiKey: KEY, retry: { baseDelayMs: 5, maxDelayMs: 20 }, ...extra });
  clients.push(c);
  return c;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

const KEY = "sk-live/0123456789+abcdef=SECRET";
const REQUEST: GenerationRequest = {
  model: "actor-2",
  resolution: "720p",
  aspectRatio: "16:9",
  chunks: [{ duration: 5, conditions: [{ type: "text", content: "hello" }] }],
};

describe("a costed call is a refusal only when the answer proves nothing was created (item 15)", () => {
  it.each([
    [303, { location: "/v1/generations/1001" }],
    [301, { location: "/elsewhere" }],
    [400, {}],
    [403, {}],
    [404, {}],
    [409, {}],
    [500, {}],
  ])(
    "a %i on POST /v1/generations or /v1/audios is an unknown outcome, sent once",
    async (status, headers) => {
      const server = await hostile((_req, res) => json(res, status, { detail: "done, maybe" }, headers));
      const c = client(server.baseUrl);
      const submit = await failure(c.submitGeneration(REQUEST));
      expect(submit).toBeInstanceOf(OutcomeUnknownError);
      expect(submit.message).toContain(`(${status})`);
      const speech = await failure(c.createSpeech({ voiceId: "17", text: "hi" }));
      expect(speech).toBeInstanceOf(OutcomeUnknownError);
      expect(server.count("POST", "/v1/generations")).toBe(1);
      expect(server.count("POST", "/v1/audios")).toBe(1);
    },
  );

  it.each([
    [401, AuthError],
    [402, CreditsError],
    [422, ValidationError],
  ])("a %i is a definite refusal", async (status, type) => {
    const server = await hostile((_req, res) => json(res, status, { detail: "no" }));
    const error = await failure(client(server.baseUrl).submitGeneration(REQUEST));
    expect(error).toBeInstanceOf(type);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
  });

  it("429 and 503 stay definite refusals, tried again", async () => {
    const server = await hostile((_req, res) =>
      json(res, 429, { detail: "slow down" }, { "retry-after": "0" }),
    );
    const c = client(server.baseUrl, { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    expect(await failure(c.submitGeneration(REQUEST))).toBeInstanceOf(RateLimitError);
    server.answer((_req, res) => json(res, 503, { detail: "busy" }));
    expect(await failure(c.submitGeneration(REQUEST))).toBeInstanceOf(ServerError);
    expect(server.count("POST", "/v1/generations")).toBe(4);
  });
});

describe("ids (item 9)", () => {
  it.each([-5, 0, "-7"])(
    "a submission answered with id %s has an unknown outcome, never a task to poll",
    async (id) => {
      const server = await hostile((_req, res) => json(res, 200, { id }));
      const error = await failure(client(server.baseUrl).submitGeneration(REQUEST));
      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect(error.message).toContain("is not a valid id");
    },
  );
});

describe("answers that never end, or drip (item 10)", () => {
  /** Sends 64 KiB chunks after `status` headers until the client goes away. */
  function endless(status: number) {
    return hostile((_req, res) => {
      res.writeHead(status, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      res.write('{"detail": "');
      pump();
    });
  }

  it("a 200 whose body never ends is cut at 1 MiB: unreadable for a poll, an unknown outcome for a submission", async () => {
    const server = await endless(200);
    const c = client(server.baseUrl, { retry: { maxAttempts: 1 } });
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const poll = await failure(c.getGeneration("1001"));
    expect(poll).toBeInstanceOf(ProtocolError);
    expect(poll.message).toContain("longer than 1048576 bytes");
    const submit = await failure(c.submitGeneration(REQUEST));
    expect(submit).toBeInstanceOf(OutcomeUnknownError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 1024 * 1024);
  });

  it("an error status with an endless body is judged by its status (a 422 stays a definite refusal)", async () => {
    const server = await endless(422);
    const error = await failure(client(server.baseUrl).submitGeneration(REQUEST));
    expect(error).toBeInstanceOf(ValidationError);
  });

  /** Answers with headers at once, then one byte of the body every 100 ms: no silence is long. */
  function dripping() {
    return hostile((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(" ")), 100);
      res.on("close", () => clearInterval(timer));
    });
  }

  it("a body that drips is given up at the call's overall deadline; a submission then has an unknown outcome", async () => {
    const server = await dripping();
    const c = client(server.baseUrl, {
      timeouts: { callMs: 600, bodyMs: 60_000, headersMs: 60_000 },
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const started = Date.now();
    const poll = await failure(c.getGeneration("1001"));
    expect(poll).toBeInstanceOf(TimeoutError);
    expect(poll.message).toContain("no complete answer within 1 s");
    expect(server.count("GET", "/v1/generations/1001")).toBe(2); // a read is tried again
    const submit = await failure(c.submitGeneration(REQUEST));
    expect(submit).toBeInstanceOf(OutcomeUnknownError);
    expect(server.count("POST", "/v1/generations")).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("an upload whose answer drips is given up too", async () => {
    const server = await dripping();
    const dir = await tempDir();
    const file = join(dir, "a.png");
    await writeFile(file, Buffer.alloc(1024));
    const c = client(server.baseUrl, { timeouts: { callMs: 600 }, retry: { maxAttempts: 1 } });
    const error = await failure(c.uploadAsset(file));
    expect(error).toBeInstanceOf(TimeoutError);
  });
});

describe("the key echoed by the service (item 7)", () => {
  const base64 = Buffer.from(`Bearer ${KEY}`).toString("base64");
  const forms = [KEY, encodeURIComponent(KEY), Buffer.from(KEY).toString("base64"), base64.slice(10, 40)];

  it("is scrubbed from error messages, field issues, fail reasons and every string of an answer", async () => {
    const echo = `Bearer ${KEY} ${encodeURIComponent(KEY)} ${Buffer.from(KEY).toString("base64")} ${base64}`;
    const server = await hostile((req, res) => {
      if (req.url === "/v1/generations" && req.body.includes("422")) {
        json(res, 422, { detail: [{ loc: ["header", echo], msg: `bad ${echo}`, input: echo }] });
      } else if (req.url === "/v1/generations") {
        res.writeHead(500).end(`<html>${echo}</html>`);
      } else if (req.url === "/v1/generations/1001") {
        json(res, 200, { id: 1001, status: "Fail", failReason: `refused ${echo}`, createTime: echo });
      } else if (req.url === "/v1/generations/1002") {
        json(res, 200, { id: 1002, status: "Success", resultVideoURL: `https://cdn.example/v.mp4?t=${KEY}` });
      } else if (req.url === "/v1/generations/1003") {
        json(res, 200, { id: 1003, status: `Exploded ${KEY}` });
      } else {
        res.writeHead(200).end(`not json ${KEY}`);
      }
    });
    const c = client(server.baseUrl);
    const seen: string[] = [];
    const rejected = await failure(
      c.submitGeneration({ ...REQUEST, chunks: [{ duration: 422, conditions: [] }] }),
    );
    expect(rejected).toBeInstanceOf(ValidationError);
    seen.push(rejected.message, JSON.stringify((rejected as ValidationError).issues));
    seen.push((rejected as ValidationError).serviceMessage ?? "");
    const unknown = await failure(c.submitGeneration(REQUEST));
    seen.push(unknown.message, (unknown as OutcomeUnknownError).serviceMessage ?? "");
    seen.push(JSON.stringify(await c.getGeneration("1001")), JSON.stringify(await c.getGeneration("1002")));
    seen.push((await failure(c.getGeneration("1003"))).message, (await failure(c.getAsset("5"))).message);
    expect(seen.join("\n")).toContain("[REDACTED]");
    for (const form of forms) expect(seen.join("\n")).not.toContain(form);
  });

  // Review: the forms above were caught, these were not: hex, upper case, a zero-width space in
  // the key, and a body that is not JSON quoted cut short inside the key.
  it("is scrubbed in hex, in any letter case, split by invisible characters, and from a quote cut short", async () => {
    const hex = Buffer.from(KEY).toString("hex");
    const split = `${KEY.slice(0, 6)}\u200b${KEY.slice(6)}`;
    const variants = [hex, hex.toUpperCase(), KEY.toUpperCase(), split];
    const server = await hostile((req, res) => {
      if (req.url === "/v1/generations") json(res, 400, { detail: `bad token ${variants.join(" ")}` });
      else res.writeHead(500).end(`${"x".repeat(290)}${KEY}`); // quoted up to 300 characters
    });
    const c = client(server.baseUrl);
    const seen = [
      (await failure(c.submitGeneration(REQUEST))).message,
      (await failure(c.getAsset("5"))).message,
    ];
    const text = seen.join("\n");
    for (const form of [...variants, KEY.slice(0, 10)]) expect(text).not.toContain(form);
    expect(text).not.toMatch(/sk-live\/0/i);
  });
});

describe("TLS failures in reel's words (item 14)", () => {
  const tls = join(REPO, "test", "fixtures", "tls");

  it("an untrusted certificate is one line naming the host and the reason", async () => {
    const server = createHttpsServer(
      { key: readFileSync(join(tls, "key.pem")), cert: readFileSync(join(tls, "cert.pem")) },
      (_req, res) => json(res, 200, { id: 1 }),
    );
    httpsServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const error = await failure(client(`https://${host}`).submitGeneration(REQUEST));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).sent).toBe(false); // the handshake comes before the request
    expect(error.message).toBe(
      `POST /v1/generations: network error: TLS handshake with ${host} failed: certificate not trusted (self-signed) (DEPTH_ZERO_SELF_SIGNED_CERT)`,
    );
  });
});
