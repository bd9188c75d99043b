// `reel review` as a local web server, over plain HTTP (node:http, which lets a test send any Host):
// after a real sandbox run with a real state file, every request without the token, with a foreign
// Host, or for a file outside OUT is refused; the token moves from the address into a cookie; no
// secret reaches a response. And each guard on its own.
import { request } from "node:http";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkToken, fileInOut, hostAllowed } from "../../src/review/server/guards.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, until, useCommands, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const command = useCommands();

const SHOP = `version: 1
name: shop
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: mug
    takes: 2
    chunks:
      - duration: 5
        text: "a mug on a table"
`;

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function ask(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: options.method ?? "GET",
        headers: { host: `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** A real run of shop on the sandbox, then `reel review` on it: its port, token and folder. */
async function reviewing(s: Sandbox) {
  const dir = await tempDir();
  await writeTree(dir, { "shop.yaml": SHOP });
  const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
  expect(run.code, run.stderr).toBe(0);
  const review = command(["review"], { cwd: dir, env: env(s) });
  await until(() => review.output().stdout.includes("\n"), "the review address");
  const line = review.output().stdout;
  const match = /^reel review: http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+)\n$/.exec(line);
  expect(match, line).not.toBeNull();
  return { dir, port: Number(match![1]), token: match![2]!, review };
}

describe("the review server's guards", () => {
  it("lets in only the exact loopback address served", () => {
    expect(hostAllowed("127.0.0.1:4000", 4000)).toBe(true);
    expect(hostAllowed("evil.example:4000", 4000)).toBe(false);
    expect(hostAllowed("localhost:4000", 4000)).toBe(false);
    expect(hostAllowed("127.0.0.1:4001", 4000)).toBe(false);
    expect(hostAllowed(undefined, 4000)).toBe(false);
  });

  it("takes the token from the cookie or the header, and tells missing from wrong", () => {
    expect(checkToken({}, "abc")).toBe("missing");
    expect(checkToken({ cookie: "other=1; reel_review=abc" }, "abc")).toBe("ok");
    expect(checkToken({ cookie: "reel_review=abd" }, "abc")).toBe("wrong");
    expect(checkToken({ "x-reel-token": "abc" }, "abc")).toBe("ok");
    expect(checkToken({ "x-reel-token": "abcd" }, "abc")).toBe("wrong");
  });

  it("finds only regular files inside OUT, through no '..' and no link leading out", async () => {
    const dir = await tempDir();
    const out = join(dir, "out");
    await mkdir(join(out, "shop"), { recursive: true });
    await writeFile(join(out, "shop", "mug.mp4"), "video");
    await writeFile(join(dir, "secret.txt"), "secret");
    await symlink(join(dir, "secret.txt"), join(out, "shop", "link.mp4"));
    await symlink(dir, join(out, "up"));
    expect(fileInOut(out, "shop/mug.mp4")).toBe(join(out, "shop", "mug.mp4"));
    expect(fileInOut(out, "shop/../../secret.txt")).toBeUndefined();
    expect(fileInOut(out, "%2e%2e/secret.txt")).toBeUndefined();
    expect(fileInOut(out, "shop/link.mp4")).toBeUndefined();
    expect(fileInOut(out, "up/secret.txt")).toBeUndefined();
    expect(fileInOut(out, "shop")).toBeUndefined();
    expect(fileInOut(out, "shop/none.mp4")).toBeUndefined();
    expect(fileInOut(out, "%E0%A4%A")).toBeUndefined();
  });
});

describe("reel review over HTTP", () => {
  it("moves the token into an HttpOnly, SameSite=Strict cookie, then serves the page, the takes and the videos", async () => {
    const s = await sandbox();
    const { port, token } = await reviewing(s);
    const first = await ask(port, `/?token=${token}`);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe("/");
    const cookie = (first.headers["set-cookie"] as string[])[0]!;
    expect(cookie).toBe(`reel_review=${token}; HttpOnly; SameSite=Strict; Path=/`);
    const withCookie = { cookie: `reel_review=${token}` };
    const page = await ask(port, "/", { headers: withCookie });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    const takes = await ask(port, "/api/takes", { headers: withCookie });
    const jobs = (JSON.parse(takes.body) as { takes: { job: string; src: string }[] }).takes;
    expect(jobs.map((t) => t.job)).toEqual(["shop/mug~1", "shop/mug~2"]);
    const video = await ask(port, jobs[0]!.src, { headers: { ...withCookie, range: "bytes=0-3" } });
    expect(video.status).toBe(206);
    // No secret in any answer: the API key is in the server's environment only.
    for (const answer of [page, takes]) expect(answer.body).not.toContain(s.apiKey);
  });

  it("refuses a request without the token (401) or with a wrong one (403), and records nothing", async () => {
    const s = await sandbox();
    const { dir, port } = await reviewing(s);
    for (const path of ["/", "/api/takes", "/api/events", "/out/shop/mug~1.mp4"]) {
      const answer = await ask(port, path);
      expect([path, answer.status]).toEqual([path, 401]);
      expect(answer.body).not.toMatch(/<form|password|login/i);
      expect((await ask(port, path, { headers: { cookie: "reel_review=guess" } })).status).toBe(403);
    }
    expect((await ask(port, "/?token=guess")).status).toBe(403);
    const post = await ask(port, "/api/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ job: "shop/mug~1", decision: "approved", reviewer: "mallory" }),
    });
    expect(post.status).toBe(401);
    const status = await runCli(["status", "--json"], { cwd: dir, env: env(s) });
    expect(
      (JSON.parse(status.stdout) as { jobs: { decision: unknown }[] }).jobs.map((j) => j.decision),
    ).toEqual([null, null]);
  });

  it("refuses a foreign Host (DNS rebinding) with 403, token or not", async () => {
    const s = await sandbox();
    const { port, token } = await reviewing(s);
    for (const host of [`evil.example:${port}`, `localhost:${port}`, "127.0.0.1"]) {
      expect((await ask(port, `/?token=${token}`, { headers: { host } })).status).toBe(403);
      expect(
        (await ask(port, "/api/takes", { headers: { host, cookie: `reel_review=${token}` } })).status,
      ).toBe(403);
    }
  });

  it("serves no file outside OUT: not the state, not through '..', not through a link", async () => {
    const s = await sandbox();
    const { dir, port, token } = await reviewing(s);
    await symlink(join(dir, ".reel"), join(dir, "out", "state-link"));
    const headers = { cookie: `reel_review=${token}` };
    for (const path of [
      "/out/../.reel/state.db",
      "/out/%2e%2e/.reel/state.db",
      "/out/shop/..%2f..%2f.reel/state.db",
      "/out/state-link/state.db",
      "/out/",
      "/.reel/state.db",
    ]) {
      const answer = await ask(port, path, { headers });
      expect([path, answer.status]).toEqual([path, 404]);
    }
    expect((await ask(port, "/out/results.jsonl", { headers })).status).toBe(200);
  });
});
