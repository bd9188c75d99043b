// Remote sources: an https URL in a manifest is fetched (once per URL), then uploaded (once per
// content), as docs/service-api.md requires. Media is served over real TLS on loopback; `reel run` runs in a
// child process that trusts the test certificate through NODE_EXTRA_CA_CERTS, and is given
// --allow-private-sources (loopback is refused without it: private-sources.test.ts).
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { REPO, spawnReel, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

const TLS = join(REPO, "test", "fixtures", "tls");
const FACE = readFileSync(join(REPO, "manifests", "media", "face.png"));

let sandbox: Sandbox | undefined;
let server: Server | undefined;
afterEach(async () => {
  await sandbox?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  sandbox = undefined;
  server = undefined;
});

/** Serves /face.png, /page.png as an HTML page with 200, /song.png as MP3 bytes; any other path is a 404. Counts the requests per path. */
async function mediaServer(): Promise<{ origin: string; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  server = createServer(
    { key: readFileSync(join(TLS, "key.pem")), cert: readFileSync(join(TLS, "cert.pem")) },
    (req, res) => {
      hits.set(req.url ?? "", (hits.get(req.url ?? "") ?? 0) + 1);
      if (req.url === "/moved.png") {
        res.writeHead(302, { location: "/face.png" }).end();
        return;
      }
      if (req.url === "/page.png") {
        res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Sign in</body></html>");
        return;
      }
      if (req.url === "/song.png") {
        res
          .writeHead(200, { "content-type": "image/png" })
          .end(Buffer.concat([Buffer.from("ID3"), Buffer.alloc(64)]));
        return;
      }
      if (req.url !== "/face.png") {
        res.writeHead(404).end("not here");
        return;
      }
      res.writeHead(200, { "content-type": "image/png", "content-length": FACE.length }).end(FACE);
    },
  );
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { origin: `https://127.0.0.1:${(server!.address() as AddressInfo).port}`, hits };
}

function video(id: string, source: string): string {
  return `  - id: ${id}\n    model: avatar-h1\n    source: ${source}\n    chunks:\n      - duration: 5\n        speech: { voice: 17, text: "hello" }\n`;
}

async function reel(args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawnReel([...args, "--allow-private-sources"], {
    cwd,
    env: {
      REEL_BASE_URL: sandbox!.baseUrl,
      REEL_API_KEY: sandbox!.apiKey,
      NODE_EXTRA_CA_CERTS: join(TLS, "cert.pem"),
    },
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stderr };
}

it("fetches an https source once, uploads its content once, and fetches nothing on the rerun", async () => {
  sandbox = await startSandbox({ slots: 4, timeScale: 0.001, preProcessingMs: 1 });
  const media = await mediaServer();
  const dir = await tempDir();
  const url = `${media.origin}/face.png`;
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: remote\ndefaults:\n  resolution: 720p\nvideos:\n${video("a", url)}${video("b", url)}`,
  });
  const first = await reel(["run", "m.yaml"], dir);
  expect(first.stderr).not.toMatch(/failed/);
  expect(first.code).toBe(0);
  expect(media.hits.get("/face.png")).toBe(1);
  expect(sandbox.counters.uploadsByHash.size).toBe(1);
  expect(sandbox.counters.duplicateUploads()).toBe(0);
  expect(sandbox.counters.generationsCreated).toBe(2);
  await expectServedVideo(join(dir, "out", "remote", "a.mp4"));

  const second = await reel(["run", "m.yaml"], dir);
  expect(second.code).toBe(0);
  expect(media.hits.get("/face.png")).toBe(1);
  expect(sandbox.counters.generationsCreated).toBe(2);
});

it("fails only the job whose https source cannot be fetched, naming the address, and sends nothing for it", async () => {
  sandbox = await startSandbox({ slots: 4, timeScale: 0.001, preProcessingMs: 1 });
  const media = await mediaServer();
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: remote\ndefaults:\n  resolution: 720p\nvideos:\n${video("ok", `${media.origin}/face.png`)}${video("gone", `${media.origin}/gone.png`)}`,
  });
  const run = await reel(["run", "m.yaml"], dir);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`${media.origin}/gone.png`);
  expect(run.stderr).toMatch(/404/);
  expect(sandbox.counters.generationsCreated).toBe(1);
  expect(run.stderr).toContain("nothing was sent for this video, and the next run tries it again");
  const results = await readResults<{ id: string; status: string; error: string }>(dir);
  expect(results.find((r) => r.id === "gone")?.status).toBe("Fail");
  expect(results.find((r) => r.id === "gone")?.error).toContain("the next run tries it again");
  // Its record is written, as for a failure on the service.
  const record = JSON.parse(await readFile(join(dir, "out", "remote", "gone.json"), "utf8")) as object;
  expect(record).toMatchObject({ status: "Fail", taskId: null });
  expect(results.find((r) => r.id === "ok")?.status).toBe("Success");
  // As said: the next run tries it again (and still sends nothing for it while the address fails).
  const hitsBefore = media.hits.get("/gone.png") ?? 0;
  expect((await reel(["run", "m.yaml"], dir)).code).toBe(1);
  expect(media.hits.get("/gone.png")).toBeGreaterThan(hitsBefore);
  expect(sandbox.counters.generationsCreated).toBe(1);
});

it("names a fetched source's wrong format in the words `reel validate` uses for a local file", async () => {
  sandbox = await startSandbox({ slots: 4, timeScale: 0.001, preProcessingMs: 1 });
  const media = await mediaServer();
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: remote\ndefaults:\n  resolution: 540p\nvideos:\n${video("song", `${media.origin}/song.png`)}`,
  });
  const run = await reel(["run", "m.yaml"], dir);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(`${media.origin}/song.png is not an image: its content is an MP3 audio file;`);
  expect(sandbox.counters.generationsCreated).toBe(0);
});

it("refuses a fetched source that is not an image (an HTML page served with 200) before uploading or submitting", async () => {
  sandbox = await startSandbox({ slots: 4, timeScale: 0.001, preProcessingMs: 1 });
  const media = await mediaServer();
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: remote\ndefaults:\n  resolution: 540p\nvideos:\n${video("page", `${media.origin}/page.png`)}${video("moved", `${media.origin}/moved.png`)}`,
  });
  const run = await reel(["run", "m.yaml"], dir);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(
    `${media.origin}/page.png is not an image: its content is none of the accepted formats`,
  );
  // A redirect is not followed (a source is fetched where the manifest says), and the message says so.
  expect(run.stderr).toContain(
    "moved.png: HTTP 302; reel does not follow redirects for sources: give the final address (/face.png)",
  );
  expect(sandbox.counters.requestCount("POST", "/v1/assets")).toBe(0);
  expect(sandbox.counters.generationsCreated).toBe(0);
});
