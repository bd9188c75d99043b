// `--sandbox` runs of two machines on one PostgreSQL store: each machine's sandbox is its own service
// (its tasks and assets live in its own folder), so neither follows, downloads or counts the other's
// tasks. The machines are real processes under host names of their own (a UTS namespace).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

/** Whether this user may give a process a host name of its own (root, or user namespaces allowed). */
const canRename =
  process.platform === "linux" &&
  spawnSync("unshare", ["--uts", "sh", "-c", "hostname reel-test"], { stdio: "ignore" }).status === 0;

const database = usePostgres();
const reel = useReelProcesses();

/** `reel` run as if on the machine `host`. */
const on = (host: string): string[] => ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host];

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
  - id: v1
    source: ./face.png
    chunks:
      - duration: 5
        text: "take 1"
`;

describe("--sandbox on a shared store", () => {
  it("keeps each machine's sandbox apart: a second machine makes its own videos, a rerun on the first makes none", async (context) => {
    if (!canRename) {
      console.warn("skipped: `unshare --uts` is not available to this user");
      context.skip();
    }
    const url = await database(context);
    const env = { REEL_STORE: url };
    const a = await tempDir();
    const b = await tempDir();
    for (const dir of [a, b])
      await writeTree(dir, { "promo.yaml": MANIFEST, "face.png": { fixture: "tiny.png" } });
    const args = ["run", "promo.yaml", "--sandbox", "--time-scale", "0"];

    const first = reel(args, a, env, on("machine-a"));
    expect(await first.exit, first.stderr()).toBe(0);
    const other = reel(args, b, env, on("machine-b"));
    expect(await other.exit, other.stderr()).toBe(0);
    const made = await readResults<{ id: string; status: string; file: string | null }>(b);
    expect(made.map((r) => [r.id, r.status, r.file !== null])).toEqual([
      ["v0", "Success", true],
      ["v1", "Success", true],
    ]);
    expect(other.stderr()).toContain("2 Success");
    expect(other.stderr()).not.toContain("done before");

    const again = reel(args, a, env, on("machine-a"));
    expect(await again.exit, again.stderr()).toBe(0);
    expect(again.stderr()).toMatch(/nothing to do|already done|2 done before/);
  });
});
