// https sources on loopback, link-local and private addresses are refused unless the user gives
// --allow-private-sources: a manifest dropped into a watched folder must not fetch from the machine,
// its network or a cloud metadata service, nor tell open local ports from closed ones by the way a
// fetch fails. (Fetching from such an address with the flag: remote-source.test.ts, whose media
// server listens on 127.0.0.1.)
import { createServer, type Server } from "node:https";
import { createServer as createPlainServer } from "node:net";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isPrivateAddress } from "../../src/engine/source-address.js";
import { REPO, runCli, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const TLS = join(REPO, "test", "fixtures", "tls");

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const probe = createPlainServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function video(id: string, source: string): string {
  return `  - id: ${id}\n    model: actor-1\n    resolution: 720p\n    source: ${source}\n    chunks:\n      - duration: 5\n        text: "hello"\n`;
}

const REFUSAL =
  "reel fetches sources from public addresses only, not loopback, link-local or private ones (give --allow-private-sources to allow them)";

it("refuses every private address with one message, whether a port is open or closed, connecting to none", async () => {
  const s = await sandbox();
  let hits = 0;
  server = createServer(
    { key: readFileSync(join(TLS, "key.pem")), cert: readFileSync(join(TLS, "cert.pem")) },
    (_req, res) => {
      hits++;
      res.writeHead(404).end();
    },
  );
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const open = (server.address() as AddressInfo).port;
  const closed = await closedPort();
  const sources: Record<string, string> = {
    open: `https://127.0.0.1:${open}/face.png`,
    closed: `https://127.0.0.1:${closed}/face.png`,
    // A name is judged by the address it resolves to, in the connection's own lookup.
    name: `https://localhost:${open}/face.png`,
    v6: `https://[::1]:${open}/face.png`,
    mapped: `https://[::ffff:127.0.0.1]:${open}/face.png`,
    metadata: "https://169.254.169.254/latest/meta-data.png",
    private10: "https://10.1.2.3/face.png",
    zero: `https://0.0.0.0:${open}/face.png`,
  };
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\nvideos:\n${Object.entries(sources)
      .map(([id, url]) => video(id, url))
      .join("")}`,
  });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const run = await runCli(["run", "m.yaml"], { cwd: dir, env });
  expect(run.code).toBe(1);
  expect(hits).toBe(0);
  expect(s.counters.generationsCreated).toBe(0);
  const results = await readResults<{ id: string; status: string; error: string }>(dir);
  for (const [id, url] of Object.entries(sources)) {
    const row = results.find((r) => r.id === id);
    expect(row?.status, id).toBe("Fail");
    // The same words for every one: only the address differs (as reel writes it: normalised).
    expect(row?.error.replace(new URL(url).href, "URL"), id).toBe(
      `could not fetch URL: ${REFUSAL}; nothing was sent for this video, and the next run tries it again`,
    );
  }
});

describe("isPrivateAddress", () => {
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "0.0.0.0",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "[::1]",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%eth0",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:7f00:1::",
    "ff02::1",
  ])("refuses %s", (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
  ])("allows %s", (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});
