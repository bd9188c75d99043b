// The hashes of local media with `--store postgres://...`: kept per machine (the store's rows of this
// host), so a second run over unchanged files reads none of them again.
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { throughProxy, useTcpProxies } from "../helpers/tcp-proxy.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();
const proxy = useTcpProxies();

const MANIFEST = `version: 1
name: promo
defaults:
  model: actor-1
  resolution: 720p
videos:
  - id: v0
    source: ./face.png
    chunks:
      - duration: 5
        text: "take 0"
`;

describe("the hash cache on a PostgreSQL store", () => {
  it("hashes a run's media once: a second run reads no file again", async (context) => {
    const url = await database(context);
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": MANIFEST, "face.png": { fixture: "tiny.png" } });
    // Edited long ago: a file changed just now is hashed again on purpose (cached-file-hash.ts RACY_MS).
    const past = new Date(Date.now() - 3_600_000);
    await utimes(join(dir, "face.png"), past, past);
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, REEL_STORE: url };

    const first = await runCli(["run", "promo.yaml", "--json"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).hashing).toEqual({ hashed: 1, cached: 0 });

    const second = await runCli(["run", "promo.yaml", "--json"], { cwd: dir, env });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).hashing).toEqual({ hashed: 0, cached: 1 });
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("is read only for a run with local media: a run of text alone opens one connection fewer to the store", async (context) => {
    const url = new URL(await database(context));
    const through = await proxy({ host: url.hostname, port: Number(url.port) });
    const s = await sandbox();
    const dir = await tempDir();
    const textOnly = (name: string) =>
      MANIFEST.replace("name: promo", `name: ${name}`).replace("    source: ./face.png\n", "");
    await writeTree(dir, {
      "promo.yaml": MANIFEST,
      "talk.yaml": textOnly("talk"),
      "hello.yaml": textOnly("hello"),
      "face.png": { fixture: "tiny.png" },
    });
    const env = {
      REEL_BASE_URL: s.baseUrl,
      REEL_API_KEY: s.apiKey,
      REEL_STORE: throughProxy(url.href, through),
    };
    const connectionsOf = async (manifest: string): Promise<number> => {
      const before = through.connections;
      const done = await runCli(["run", manifest], { cwd: dir, env });
      expect(done.code, done.stderr).toBe(0);
      return through.connections - before;
    };
    // The first run makes the schema; the two after it are alike (one new job each) but for the media.
    await connectionsOf("hello.yaml");
    const text = await connectionsOf("talk.yaml");
    const media = await connectionsOf("promo.yaml");
    expect(media).toBe(text + 1);
  });
});
