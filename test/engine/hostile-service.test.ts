// `reel run` (the real CLI, in-process) against a service that misbehaves on purpose: a node:http
// server on 127.0.0.1 whose answers each test writes. What the user sees and what is paid. Issue 15.
import { readdir, readFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { REPO, runCli, writeTree } from "../helpers/cli.js";
import { json, MP4, textManifest, useHostileServers } from "../helpers/hostile-server.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

const hostile = useHostileServers();

async function workspace(videos: number): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": textManifest(videos) });
  return dir;
}

function run(dir: string, baseUrl: string, extra: string[] = [], key = "sk-test-key") {
  return runCli(["run", "m.yaml", ...extra], {
    cwd: dir,
    env: { REEL_BASE_URL: baseUrl, REEL_API_KEY: key },
  });
}

/** The text of every line of results.jsonl, by video id. */
async function resultsById(dir: string) {
  const rows = await readResults<{ id: string; status: string; taskId: string | null; error: string | null }>(
    dir,
  );
  return Object.fromEntries(rows.map((r) => [r.id, r]));
}

describe("a costed call answered with a status that proves nothing (item 15)", () => {
  it("a 303 on POST /v1/generations leaves the job uncertain: the rerun does not pay again", async () => {
    const server = await hostile((req, res) => {
      // Created, then redirected to it: a client that took this for a refusal would pay again.
      if (req.method === "POST") res.writeHead(303, { location: "/v1/generations/1001" }).end();
      else json(res, 200, { id: 1001, status: "Running" });
    });
    const dir = await workspace(1);
    const first = await run(dir, server.baseUrl);
    // Uncertain, and the run stops paying: an answer the interface does not define (exit 3).
    expect(first.code).toBe(3);
    expect((await resultsById(dir)).v1!.status).toBe("uncertain");
    expect(first.stderr).toContain("outcome unknown");
    const second = await run(dir, server.baseUrl);
    expect(second.code).toBe(1);
    expect(server.count("POST", "/v1/generations")).toBe(1);
  });

  // Review: a wrong base URL behind a gateway answers 404 to every submission; each was sent and
  // left uncertain (20 jobs, 20 requests that may each have been paid).
  it("a 404 on a submission stops the run after that one: the others stay unsent (exit 3, check --base-url)", async () => {
    const server = await hostile((_req, res) => json(res, 404, { detail: "Not Found" }));
    const dir = await workspace(3);
    const result = await run(dir, server.baseUrl, ["--concurrency", "1"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("answered 404, which the service's interface does not define");
    expect(result.stderr).toContain("check --base-url");
    const statuses = Object.values(await resultsById(dir)).map((r) => r.status);
    expect(statuses.sort()).toEqual(["uncertain", "unsent", "unsent"]);
    expect(server.count("POST", "/v1/generations")).toBe(1);
  });

  it("a 403 on a submission: that job uncertain (it may have been created), and the run stops as for a bad key", async () => {
    const server = await hostile((_req, res) => json(res, 403, { detail: "Forbidden" }));
    const dir = await workspace(3);
    const result = await run(dir, server.baseUrl, ["--concurrency", "1"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("the service rejected the API key (403)");
    const statuses = Object.values(await resultsById(dir)).map((r) => r.status);
    expect(statuses.sort()).toEqual(["uncertain", "unsent", "unsent"]);
    expect(server.count("POST", "/v1/generations")).toBe(1);
  });

  it("a 404 on POST /v1/audios leaves the speech uncertain: the rerun does not make it again", async () => {
    const server = await hostile((_req, res) => json(res, 404, { detail: "Not Found" }));
    const dir = await tempDir();
    await writeTree(dir, {
      "m.yaml": `version: 1\nname: m\nvideos:\n  - id: v1\n    model: actor-2\n    resolution: 720p\n    aspectRatio: "16:9"\n    chunks:\n      - duration: 5\n        text: "hi"\n        speech: { voice: 17, text: "Welcome." }\n`,
    });
    expect((await run(dir, server.baseUrl)).code).toBe(1);
    expect((await resultsById(dir)).v1!.status).toBe("uncertain");
    await run(dir, server.baseUrl);
    expect(server.count("POST", "/v1/audios")).toBe(1);
    expect(server.count("POST", "/v1/generations")).toBe(0);
  });
});

describe("a huge Retry-After (item 4)", () => {
  it("on submissions: parks them (said, left unsent) instead of a timer overflowing into a burst", async () => {
    const server = await hostile((_req, res) =>
      json(res, 429, { detail: "slow down" }, { "retry-after": "999999999" }),
    );
    const dir = await workspace(5);
    const started = Date.now();
    const result = await run(dir, server.baseUrl, ["--concurrency", "2"]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(1);
    // At most the submissions already on their way when the first answer came.
    expect(server.count("POST", "/v1/generations")).toBeLessThanOrEqual(2);
    expect(result.stderr).toContain("the service asked to wait 11574 d 2 h before the next submission");
    expect(result.stderr).toContain("rerun reel later");
    expect(result.stderr).toContain("reel run: incomplete");
    expect(Object.values(await resultsById(dir)).map((r) => r.status)).toEqual(Array(5).fill("unsent"));
  });

  it("on polls: parks the task (its id kept) instead of polling it in a loop; the rerun follows it", async () => {
    const server = await hostile((req, res) => {
      if (req.method === "POST") json(res, 200, { id: 1001 });
      else json(res, 429, { detail: "slow down" }, { "retry-after": "999999999" });
    });
    const dir = await workspace(1);
    const started = Date.now();
    const result = await run(dir, server.baseUrl, ["--poll-deadline", "20s"]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(1);
    expect(server.count("GET", "/v1/generations/1001")).toBeLessThanOrEqual(2);
    const v1 = (await resultsById(dir)).v1!;
    expect(v1).toMatchObject({ status: "PreProcessing", taskId: "1001" });
    expect(v1.error).toContain("the service asked to wait 11574 d 2 h before asking about it again");
    expect(v1.error).toContain("task 1001 is kept, rerun reel");
    server.answer((_req, res) => json(res, 200, { id: 1001, status: "Fail", failReason: "nope" }));
    await run(dir, server.baseUrl);
    expect((await resultsById(dir)).v1!.status).toBe("Fail");
    expect(server.count("POST", "/v1/generations")).toBe(1);
  });
});

describe("answers reel cannot read (item 9)", () => {
  it.each([
    [
      "an HTML page",
      (res: Parameters<Parameters<typeof hostile>[0]>[1]) =>
        res.writeHead(200, { "content-type": "text/html" }).end("<html>oops</html>"),
    ],
    [
      "an unknown status",
      (res: Parameters<Parameters<typeof hostile>[0]>[1]) => json(res, 200, { id: 1001, status: "Exploded" }),
    ],
  ])(
    "%s for a poll: asked again with backoff, said, then the job ends with its task id kept; the rerun follows it",
    async (_what, answer) => {
      const server = await hostile((req, res) =>
        req.method === "POST" ? json(res, 200, { id: 1001 }) : answer(res),
      );
      const dir = await workspace(1);
      const started = Date.now();
      const result = await run(dir, server.baseUrl);
      const seconds = (Date.now() - started) / 1000;
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("cannot read the service's answer about task 1001");
      expect(result.stderr).toContain("stopped following task 1001");
      // Ten polls over several seconds, not 45 a second for 24 hours.
      expect(server.count("GET", "/v1/generations/1001")).toBe(10);
      expect(seconds).toBeGreaterThan(3);
      const v1 = (await resultsById(dir)).v1!;
      expect(v1).toMatchObject({ status: "PreProcessing", taskId: "1001" });
      expect(v1.error).toContain("could not be read 10 times in a row");
      server.answer((_req, res) => json(res, 200, { id: 1001, status: "Fail", failReason: "nope" }));
      await run(dir, server.baseUrl);
      expect((await resultsById(dir)).v1!.status).toBe("Fail");
      expect(server.count("POST", "/v1/generations")).toBe(1);
    },
    30_000,
  );

  it("a submission answered {id: -5} is uncertain, never polled and never resent", async () => {
    const server = await hostile((_req, res) => json(res, 200, { id: -5 }));
    const dir = await workspace(1);
    expect((await run(dir, server.baseUrl)).code).toBe(1);
    const v1 = (await resultsById(dir)).v1!;
    expect(v1.status).toBe("uncertain");
    expect(v1.error).toContain("id -5 is not a valid id");
    await run(dir, server.baseUrl);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /v1/generations"]);
  });
});

describe("one task id for every submission", () => {
  /** A service that answers task 1001 to every submission, and that task's one video. */
  async function oneTaskService() {
    const server = await hostile((req, res) => {
      if (req.method === "POST") json(res, 200, { id: 1001 });
      else if (req.url === "/v1/generations/1001") {
        const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/v.mp4`;
        json(res, 200, { id: 1001, status: "Success", resultVideoURL: url });
      } else if (req.url === "/v.mp4") res.writeHead(200, { "content-type": "video/mp4" }).end(MP4);
      else res.writeHead(404).end();
    });
    return server;
  }

  it("a task id another job holds is the service's fault: said, that job uncertain naming the other, never followed; the run sends no more", async () => {
    const server = await oneTaskService();
    const dir = await workspace(4);
    const first = await run(dir, server.baseUrl, ["--concurrency", "1"]);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toMatch(
      /POST \/v1\/generations answered task 1001 for m\/v2, which m\/v1 already holds: a fault of the service/,
    );
    const shown = await resultsById(dir);
    expect(shown.v1!.status).toBe("Success");
    expect(shown.v2!.status).toBe("uncertain");
    expect(shown.v2!.error).toContain("the service answered task 1001, which m/v1 already holds");
    expect(shown.v2!.taskId).toBeNull();
    expect([shown.v3!.status, shown.v4!.status]).toEqual(["unsent", "unsent"]);
    expect(server.count("POST", "/v1/generations")).toBe(2);
    // What was paid for is collected: v1's video, and never a copy of it under another job's name.
    const videos = async () => (await readdir(join(dir, "out", "m"))).filter((f) => f.endsWith(".mp4"));
    expect(await videos()).toEqual(["v1.mp4"]);
    // A rerun stops again at the next answer of the same task id.
    expect((await run(dir, server.baseUrl, ["--concurrency", "1"])).code).toBe(3);
    expect((await resultsById(dir)).v3!.status).toBe("uncertain");
    expect(await videos()).toEqual(["v1.mp4"]);
    expect(server.count("POST", "/v1/generations")).toBe(3);
  });

  it("at once: of four submissions answered with one task id, one job follows it and three are uncertain", async () => {
    const server = await oneTaskService();
    const dir = await workspace(4);
    const first = await run(dir, server.baseUrl, ["--concurrency", "4"]);
    expect(first.code, first.stderr).toBe(3);
    await run(dir, server.baseUrl);
    const statuses = Object.values(await resultsById(dir)).map((r) => r.status);
    expect(statuses.sort()).toEqual(["Success", "uncertain", "uncertain", "uncertain"]);
    expect((await readdir(join(dir, "out", "m"))).filter((f) => f.endsWith(".mp4"))).toHaveLength(1);
    expect(server.count("POST", "/v1/generations")).toBe(4);
  });
});

describe("the key, echoed by the service (item 7)", () => {
  const KEY = "sk-live/0123456789+abcdef=SECRET";
  const echo = `Bearer ${KEY} token=${encodeURIComponent(KEY)} b64=${Buffer.from(KEY).toString("base64")} auth=${Buffer.from(`Bearer ${KEY}`).toString("base64")}`;
  const forms = [
    KEY,
    encodeURIComponent(KEY),
    Buffer.from(KEY).toString("base64"),
    Buffer.from(`Bearer ${KEY}`).toString("base64").slice(12, 40),
  ];

  /** Every file under `dir` (state file, its WAL, logs, records, results, report), as bytes. */
  async function everyFile(dir: string): Promise<Map<string, string>> {
    const files = new Map<string, string>();
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      files.set(path, (await readFile(path)).toString("latin1"));
    }
    return files;
  }

  it("is in no file and no output after a 422, a 500, a Fail reason and a result URL that echo it", async () => {
    const server = await hostile((req, res) => {
      if (req.method === "POST" && req.body.includes("text-v1")) {
        json(res, 422, {
          detail: [{ loc: ["header", "authorization"], msg: `bad token ${echo}`, input: echo }],
        });
      } else if (req.method === "POST" && req.body.includes("text-v2")) {
        res.writeHead(500, { "content-type": "text/plain" }).end(`internal error: ${echo}`);
      } else if (req.method === "POST") {
        json(res, 200, { id: req.body.includes("text-v3") ? 1003 : 1004 });
      } else if (req.url === "/v1/generations/1003") {
        json(res, 200, { id: 1003, status: "Fail", failReason: `refused: ${echo}` });
      } else if (req.url === "/v1/generations/1004") {
        const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/v.mp4?t=${encodeURIComponent(KEY)}&k=${KEY}`;
        json(res, 200, { id: 1004, status: "Success", resultVideoURL: url, createTime: echo });
      } else if (req.url.startsWith("/v.mp4")) {
        res.writeHead(200, { "content-type": "video/mp4" }).end(MP4);
      } else {
        res.writeHead(404).end();
      }
    });
    const dir = await workspace(4);
    const result = await run(dir, server.baseUrl, [], KEY);
    expect(result.code).toBe(1);
    const shown = await resultsById(dir);
    expect(shown.v1!.status).toBe("Fail");
    expect(shown.v2!.status).toBe("uncertain");
    expect(shown.v3!.status).toBe("Fail");
    expect(shown.v4!.status).toBe("Success");
    expect(`${shown.v1!.error} ${shown.v2!.error} ${shown.v3!.error}`).toContain("[REDACTED]");
    const files = await everyFile(dir);
    expect([...files.keys()].some((f) => f.endsWith("index.html"))).toBe(true);
    expect([...files.keys()].some((f) => f.endsWith("state.db"))).toBe(true);
    for (const form of forms) {
      expect(result.stdout + result.stderr).not.toContain(form);
      for (const [path, text] of files) expect(text.includes(form), `${form} in ${path}`).toBe(false);
    }
    // The key was sent only as the Authorization header of the service's API, never to the file.
    const download = server.requests.find((r) => r.url.startsWith("/v.mp4"))!;
    expect(download.headers.authorization).toBeUndefined();
  });
});

describe("messages (item 14)", () => {
  it("a file:// result URL is refused saying the address and the rule", async () => {
    const server = await hostile((req, res) => {
      if (req.method === "POST") json(res, 200, { id: 1001 });
      else json(res, 200, { id: 1001, status: "Success", resultVideoURL: "file:///etc/passwd" });
    });
    const dir = await workspace(1);
    const result = await run(dir, server.baseUrl);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `download failed: refusing to download the video from file:///etc/passwd: only https addresses are fetched (and http from the service on this machine, ${server.baseUrl})`,
    );
  });

  it("a result video behind an untrusted certificate fails at once, on one line in reel's words", async () => {
    const tls = join(REPO, "test", "fixtures", "tls");
    const files = createHttpsServer(
      { key: readFileSync(join(tls, "key.pem")), cert: readFileSync(join(tls, "cert.pem")) },
      (_req, res) => res.writeHead(200, { "content-type": "video/mp4" }).end(MP4),
    );
    await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
    onTestFinished(async () => {
      files.closeAllConnections();
      await new Promise((resolve) => files.close(resolve));
    });
    const host = `127.0.0.1:${(files.address() as AddressInfo).port}`;
    const server = await hostile((req, res) => {
      if (req.method === "POST") json(res, 200, { id: 1001 });
      else json(res, 200, { id: 1001, status: "Success", resultVideoURL: `https://${host}/v.mp4` });
    });
    const dir = await workspace(1);
    const started = Date.now();
    const result = await run(dir, server.baseUrl);
    expect(result.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000); // a refused certificate is not tried ten times
    const line = result.stderr.split("\n").find((l) => l.startsWith("  m/v1:"));
    expect(line).toBe(
      `  m/v1: Success: download failed: TLS handshake with ${host} failed: certificate not trusted (self-signed) (DEPTH_ZERO_SELF_SIGNED_CERT)`,
    );
  });
});
