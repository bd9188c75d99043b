// `reel clean` after real runs against the sandbox over real HTTP, with a real state file and real
// files in OUT: it removes exactly the videos of rejected takes and of old versions that reel wrote
// and that are still as it wrote them, keeps everything else, and a run after it sends nothing.
import { existsSync } from "node:fs";
import { appendFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { acquireLock } from "../../src/state/sqlite/db/lock.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const SHOP = (lamp: string): string => `version: 1
name: shop
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: mug
    takes: 3
    chunks:
      - duration: 5
        text: "a mug on a table"
  - id: lamp
    chunks:
      - duration: 5
        text: "${lamp}"
`;

const env = (s: Sandbox): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  REEL_REVIEWER: "ana",
});

interface CleanJson {
  ok: boolean;
  dryRun: boolean;
  removed: { file: string; job: string; why: string; bytes: number }[];
  bytes: number;
  left: { file: string; job: string; why: string }[];
}

async function cli(dir: string, s: Sandbox, argv: string[], code = 0) {
  const result = await runCli(argv, { cwd: dir, env: env(s) });
  expect(result.code, `${argv.join(" ")}: ${result.stderr}`).toBe(code);
  return result;
}

/** The kept versions of lamp (`lamp.<hash>.mp4`). */
async function keptLamps(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "out", "shop"))).filter((n) => /^lamp\.[0-9a-f]{8}\.mp4$/.test(n));
}

/**
 * shop run three times (lamp edited twice: two old versions kept), mug~1 approved, mug~2 rejected,
 * mug~3 undecided; the older kept lamp changed by the user, and a file of the user's own in OUT.
 */
async function campaign(s: Sandbox) {
  const dir = await tempDir();
  await writeTree(dir, { "shop.yaml": SHOP("a lamp turns on") });
  await cli(dir, s, ["run", "shop.yaml"]);
  await writeFile(join(dir, "shop.yaml"), SHOP("a lamp turns off"));
  await cli(dir, s, ["run", "shop.yaml"]);
  const [changedLamp, ...more] = await keptLamps(dir);
  expect(more).toEqual([]);
  await writeFile(join(dir, "shop.yaml"), SHOP("a lamp blinks"));
  await cli(dir, s, ["run", "shop.yaml"]);
  const oldLamp = (await keptLamps(dir)).find((n) => n !== changedLamp)!;
  expect(changedLamp).toBeDefined();
  expect(oldLamp).toBeDefined();
  await cli(dir, s, ["approve", "shop/mug~1"]);
  await cli(dir, s, ["reject", "shop/mug~2", "--note", "blurry"]);
  await appendFile(join(dir, "out", "shop", changedLamp!), "the user's edit");
  await writeFile(join(dir, "out", "shop", "mine.mp4"), "a file of the user's own");
  return { dir, oldLamp: `shop/${oldLamp}`, changedLamp: `shop/${changedLamp!}` };
}

const at = (dir: string, file: string): string => join(dir, "out", file);
const sizeOf = async (dir: string, file: string): Promise<number> => (await stat(at(dir, file))).size;

describe("reel clean", () => {
  it("removes the videos of rejected takes and old versions only, keeps records, and a run after it sends nothing", async () => {
    const s = await sandbox();
    const { dir, oldLamp, changedLamp } = await campaign(s);
    const gone = ["shop/mug~2.mp4", oldLamp].sort();
    const kept = ["shop/mug~1.mp4", "shop/mug~3.mp4", "shop/lamp.mp4", "shop/mine.mp4", changedLamp];
    const bytes = (await sizeOf(dir, "shop/mug~2.mp4")) + (await sizeOf(dir, oldLamp));

    // --dry-run: exactly those two, with the bytes, and nothing deleted.
    const dry = JSON.parse((await cli(dir, s, ["clean", "--dry-run", "--json"])).stdout) as CleanJson;
    expect(dry.dryRun).toBe(true);
    expect(dry.removed.map((r) => r.file).sort()).toEqual(gone);
    expect(dry.removed.find((r) => r.file === "shop/mug~2.mp4")).toMatchObject({
      job: "shop/mug~2",
      why: "rejected",
    });
    expect(dry.bytes).toBe(bytes);
    expect(dry.left).toEqual([
      expect.objectContaining({
        file: changedLamp,
        job: "shop/lamp",
        why: expect.stringContaining("not the video reel wrote"),
      }),
    ]);
    for (const file of [...gone, ...kept]) expect(existsSync(at(dir, file)), file).toBe(true);
    const dryText = await cli(dir, s, ["clean", "--dry-run"]);
    expect(dryText.stdout).toContain("would remove shop/mug~2.mp4");
    expect(dryText.stdout).toMatch(/would free .* \(2 videos\)/);

    // The real run: exactly those two go; records, chosen and undecided takes, the user's files stay.
    const real = await cli(dir, s, ["clean"]);
    expect(real.stdout).toContain("removed shop/mug~2.mp4 (rejected by ana: 'blurry')");
    expect(real.stdout).toContain(`removed ${oldLamp} (an old version)`);
    expect(real.stdout).toContain(`left ${changedLamp}`);
    expect(real.stdout).toMatch(/freed .* \(2 videos\)/);
    for (const file of gone) expect(existsSync(at(dir, file)), file).toBe(false);
    for (const file of kept) expect(existsSync(at(dir, file)), file).toBe(true);
    for (const record of ["shop/mug~2.json", oldLamp.replace(/\.mp4$/, ".json"), "shop/mug~1.json"]) {
      expect(existsSync(at(dir, record)), record).toBe(true);
    }

    // A second clean has nothing to remove.
    const again = JSON.parse((await cli(dir, s, ["clean", "--json"])).stdout) as CleanJson;
    expect(again.removed).toEqual([]);
    expect(again.bytes).toBe(0);

    // A run after it neither generates nor downloads the cleaned take again.
    const generations = s.counters.generationsCreated;
    const downloads = s.counters.requestCount("GET", "/files/:token");
    const polls = s.counters.requestCount("GET", "/v1/generations/:id");
    await cli(dir, s, ["run", "shop.yaml"]);
    expect(s.counters.generationsCreated).toBe(generations);
    expect(s.counters.requestCount("GET", "/files/:token")).toBe(downloads);
    expect(s.counters.requestCount("GET", "/v1/generations/:id")).toBe(polls);
    expect(existsSync(at(dir, "shop/mug~2.mp4"))).toBe(false);

    // Undecided again, the take is fetched back from its task at the next run, not generated again.
    await cli(dir, s, ["undecide", "shop/mug~2"]);
    await cli(dir, s, ["run", "shop.yaml"]);
    expect(existsSync(at(dir, "shop/mug~2.mp4"))).toBe(true);
    expect(s.counters.generationsCreated).toBe(generations);
  });

  it("refuses while a run or watch holds the state file, and removes nothing", async () => {
    const s = await sandbox();
    const { dir, oldLamp } = await campaign(s);
    const lock = acquireLock(join(dir, ".reel", "state.db")); // what a run or watch holds
    try {
      const refused = await cli(dir, s, ["clean"], 2);
      expect(refused.stderr).toContain("another reel process");
      expect(refused.stderr).toContain("Nothing was removed");
    } finally {
      lock.release();
    }
    expect(existsSync(at(dir, "shop/mug~2.mp4"))).toBe(true);
    expect(existsSync(at(dir, oldLamp))).toBe(true);
  });
});

describe("reel clean PATH past the default video limit", () => {
  it("cleans a manifest the project's maxVideos lets past the default limit, as run reads it", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    // Named from its file (no name:): a manifest refused for its size is not named.
    const mugs = `version: 1
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
    await writeTree(dir, { "reel.yaml": "version: 1\nmaxVideos: 300000\n", "big.yaml": mugs });
    await cli(dir, s, ["run", "big.yaml"]);
    await cli(dir, s, ["reject", "big/mug~2"]);
    // The campaign grows past the default limit (200,000): 20 templates of 100 x 100 videos more.
    const list = (p: string): string => `[${Array.from({ length: 100 }, (_, i) => `${p}${i}`).join(", ")}]`;
    let grown = mugs;
    for (let t = 0; t < 20; t++) {
      grown += `  - id: p${t}-{a}-{b}\n    matrix:\n      a: ${list("a")}\n      b: ${list("b")}\n    chunks:\n      - duration: 5\n        text: "{a} and {b}"\n`;
    }
    await writeFile(join(dir, "big.yaml"), grown);
    const cleaned = await cli(dir, s, ["clean", "big.yaml"]);
    expect(cleaned.stdout).toContain("removed big/mug~2.mp4");
    expect(existsSync(at(dir, "big/mug~2.mp4"))).toBe(false);
    expect(existsSync(at(dir, "big/mug~1.mp4"))).toBe(true);
  });
});
