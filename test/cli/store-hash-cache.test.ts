// The hashes of local media with `--store postgres://...`: kept per machine (the store's rows of this
// host), so a second run over unchanged files reads none of them again.
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();

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
});
