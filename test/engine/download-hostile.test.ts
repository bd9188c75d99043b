// downloadVideo against result servers that misbehave on purpose: one that drips (item 10), one
// whose TLS failure OpenSSL tells in several lines (item 14). Issue 15.
import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Agent } from "undici";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { makeDispatcher } from "../../src/client/transport.js";
import { downloadVideo } from "../../src/output/download.js";
import { DownloadError } from "../../src/errors/output.js";
import { REPO } from "../helpers/cli.js";
import { MP4, useHostileServers } from "../helpers/hostile-server.js";
import { tempDir } from "../helpers/temp-dir.js";

const hostile = useHostileServers();
const plainDispatcher = makeDispatcher();
afterAll(() => plainDispatcher.close());

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

describe("a result server that drips (item 10)", () => {
  it("is given up once a window brings less than the minimum, not retried, and leaves no temp file", async () => {
    // The MP4's first bytes at once (so the signature passes), then one byte every 100 ms: no
    // silence is long enough for undici's bodyTimeout.
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(MP4.length) });
      res.write(MP4.subarray(0, 64));
      let at = 64;
      const timer = setInterval(() => {
        if (res.destroyed || at >= MP4.length) return clearInterval(timer);
        res.write(MP4.subarray(at, ++at));
      }, 100);
      res.on("close", () => clearInterval(timer));
    });
    const dir = await tempDir();
    const started = Date.now();
    const error = await failure(
      downloadVideo({
        url: `${server.baseUrl}/v.mp4`,
        dest: join(dir, "v.mp4"),
        httpOrigins: [server.baseUrl],
        dispatcher: plainDispatcher,
        stall: { windowMs: 400, minBytes: 1024 },
      }),
    );
    expect(error).toBeInstanceOf(DownloadError);
    expect(error.message).toContain("under the 1024-byte minimum");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.count("GET", "/v.mp4")).toBe(1);
    expect(await readdir(dir)).toEqual([]);
  });

  it("a transfer that keeps the pace is not disturbed", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(MP4.length) });
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(MP4.subarray(at, (at += 2048)));
        if (at >= MP4.length) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
    });
    const dir = await tempDir();
    const { size } = await downloadVideo({
      url: `${server.baseUrl}/v.mp4`,
      dest: join(dir, "v.mp4"),
      httpOrigins: [server.baseUrl],
      dispatcher: plainDispatcher,
      stall: { windowMs: 200, minBytes: 1024 },
    });
    expect(size).toBe(MP4.length);
  });
});

describe("TLS failures (item 14)", () => {
  it("an alert from the server (OpenSSL's text spans lines) is one line in reel's words", async () => {
    const tls = join(REPO, "test", "fixtures", "tls");
    const cert = readFileSync(join(tls, "cert.pem"));
    // It speaks TLS 1.2 at most, reel's agent 1.3 at least: the server ends the handshake with an
    // alert, which OpenSSL reports as "...:error:0A00042E:SSL routines:...:SSL alert number 70\n".
    const server = createHttpsServer(
      { key: readFileSync(join(tls, "key.pem")), cert, maxVersion: "TLSv1.2" },
      (_req, res) => res.writeHead(200).end(MP4),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dispatcher = new Agent({ connect: { ca: cert, minVersion: "TLSv1.3" } });
    onTestFinished(async () => {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = await tempDir();
    const error = await failure(
      downloadVideo({ url: `https://${host}/v.mp4`, dest: join(dir, "v.mp4"), dispatcher, attempts: 1 }),
    );
    expect(error.message).not.toContain("\n");
    expect(error.message).not.toContain("SSL routines");
    expect(error.message).toBe(
      `TLS handshake with ${host} failed: the server refused it (tlsv1 alert protocol version) (ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION)`,
    );
  });
});
