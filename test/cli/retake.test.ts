// `reel retake` after real runs against the sandbox over real HTTP, with real state files: a retake
// is one more take of the video with a new seed, sent by the next run (or a running watch) exactly
// once, also across a kill -9 of the run that sends it; plan lists and explains it; the budget cap
// applies; it can be withdrawn until it is sent; raising `takes` later to its number makes no new job.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { takeSeed } from "../../src/manifest/expand/takes.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();

// Two takes of mug (seeds from the takes' rule), lamp without takes and with seed 40, and ghost,
// whose task ends Fail (an asset the service never had).
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
  - id: lamp
    seed: 40
    chunks:
      - duration: 5
        text: "a lamp turns on"
  - id: ghost
    source: { asset: 999999 }
    chunks:
      - duration: 5
        text: "nobody here"
`;

const env = (s: Sandbox, extra: Record<string, string> = {}): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  REEL_REVIEWER: "ana",
  ...extra,
});

async function ranShop(s: Sandbox): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, { "shop.yaml": SHOP });
  const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
  expect(run.code, run.stderr).toBe(1); // ghost failed
  return dir;
}

/** The seeds of every generation the sandbox accepted, one entry per generation. */
function seedsSent(s: Sandbox): number[] {
  const seeds: number[] = [];
  for (const [body, count] of s.counters.generationsByBody) {
    const { seed } = JSON.parse(body) as { seed?: number };
    for (let i = 0; i < count; i++) seeds.push(seed ?? -1);
  }
  return seeds;
}

/** The state of job `key` in the state file, as another process reads it. */
function stateOf(dir: string, key: string): string | undefined {
  const db = new Database(join(dir, ".reel", "state.db"), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT state FROM jobs WHERE job_key = ?").get(key) as { state: string } | undefined)
      ?.state;
  } finally {
    db.close();
  }
}

async function recordSeed(dir: string, id: string): Promise<number> {
  const record = JSON.parse(await readFile(join(dir, "out", "shop", `${id}.json`), "utf8")) as {
    spec: { seed: number };
  };
  return record.spec.seed;
}

interface StatusJson {
  decisions: Record<string, Record<string, number>>;
  jobs: { id: string; status: string; decision: string | null; note: string | null }[];
}

async function status(dir: string, s: Sandbox): Promise<StatusJson> {
  const result = await runCli(["status", "--json"], { cwd: dir, env: env(s) });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

describe("reel retake", () => {
  it("queues one more take with a new seed, sent by the next run once; plan lists and explains it", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    const before = s.counters.generationsCreated;
    const retake = await runCli(["retake", "shop/mug~2", "--note", "smile too wide"], {
      cwd: dir,
      env: env(s),
    });
    expect(retake.code, retake.stderr).toBe(0);
    const seed = takeSeed("shop", "mug~3");
    expect(retake.stdout).toBe(
      `queued shop/mug~3: a retake of shop/mug~2 (seed ${seed}); shop/mug~2 rejected: 'smile too wide'\n`,
    );
    // Said before it is queued: paid, and what.
    expect(retake.stderr).toContain("reel retake: 1 paid generation, 5 s of video (no price list");
    expect(s.counters.generationsCreated).toBe(before);

    const queued = await status(dir, s);
    expect(queued.decisions.shop).toEqual({ approved: 0, rejected: 1, undecided: 2, retakesQueued: 1 });
    expect(queued.jobs.find((j) => j.id === "mug~2")).toMatchObject({
      decision: "rejected",
      note: "smile too wide",
    });
    expect(queued.jobs.find((j) => j.id === "mug~3")).toMatchObject({ status: "unsent", decision: null });

    const plan = await runCli(["plan", "--explain", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^jobs +1 new, 3 done, 0 in flight, 1 failed/m);
    expect(plan.stdout).toContain("to submit:\n  shop/mug~3\n");
    expect(plan.stdout).toContain("  shop/mug~3: retake of mug~2, rejected by ana: 'smile too wide'\n");

    const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(run.code).toBe(1); // ghost, still failed
    expect(s.counters.generationsCreated).toBe(before + 1);
    expect(s.counters.duplicateGenerations()).toBe(0);
    const seeds = seedsSent(s);
    expect(seeds.filter((x) => x === seed)).toHaveLength(1);
    expect(await recordSeed(dir, "mug~3")).toBe(seed);
    expect(new Set([await recordSeed(dir, "mug~1"), await recordSeed(dir, "mug~2")]).has(seed)).toBe(false);
    const results = await readResults<{ id: string; status: string }>(dir);
    expect(results.find((r) => r.id === "mug~3")?.status).toBe("Success");
    expect((await status(dir, s)).decisions.shop).toEqual({
      approved: 0,
      rejected: 1,
      undecided: 3,
      retakesQueued: 0,
    });

    // Nothing more: a second run, and raising takes to the retake's number (the same job).
    expect((await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    await writeFile(join(dir, "shop.yaml"), SHOP.replace("takes: 2", "takes: 3"));
    const raised = await runCli(["plan", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(raised.stdout).toMatch(/^jobs +0 new, 4 done, 0 in flight, 1 failed/m);
    expect((await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    expect(s.counters.generationsCreated).toBe(before + 1);
  });

  it("retakes twice into two takes, retakes a failed video as its second take, and withdraws one until it is sent", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    const before = s.counters.generationsCreated;
    const twice = await runCli(["retake", "shop/mug~1", "shop/lamp", "--json"], { cwd: dir, env: env(s) });
    expect(twice.code, twice.stderr).toBe(0);
    expect(JSON.parse(twice.stdout)).toMatchObject({
      ok: true,
      retakes: [
        { job: "shop/lamp~2", from: "shop/lamp", seed: 41, seconds: 5, model: "actor-2", resolution: "720p" },
        { job: "shop/mug~3", from: "shop/mug~1", seed: takeSeed("shop", "mug~3") },
      ],
      cost: { seconds: 10, credits: null, prices: null },
    });
    const again = await runCli(["retake", "shop/mug~1"], { cwd: dir, env: env(s) });
    expect(again.stdout).toMatch(/^queued shop\/mug~4: a retake of shop\/mug~1/);
    const failed = await runCli(["retake", "shop/ghost"], { cwd: dir, env: env(s) });
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stdout).toMatch(/^queued shop\/ghost~2: a retake of shop\/ghost \(seed \d+\)/);

    const withdraw = await runCli(["retake", "--withdraw", "shop/mug~4"], { cwd: dir, env: env(s) });
    expect(withdraw.code, withdraw.stderr).toBe(0);
    expect(withdraw.stdout).toBe("withdrew shop/mug~4 (a retake of shop/mug~1); nothing was sent for it\n");
    const notRetake = await runCli(["retake", "--withdraw", "shop/mug~1"], { cwd: dir, env: env(s) });
    expect(notRetake.code).toBe(2);
    expect(notRetake.stderr).toContain("shop/mug~1 is not a retake: nothing was withdrawn");

    expect((await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) })).code).toBe(1); // ghost~2 fails too
    // lamp~2, mug~3 and ghost~2: three generations, mug~4 withdrawn.
    expect(s.counters.generationsCreated).toBe(before + 3);
    const results = await readResults<{ id: string; status: string }>(dir);
    expect(results.map((r) => `${r.id} ${r.status}`).sort()).toEqual([
      "ghost Fail",
      "ghost~2 Fail",
      "lamp Success",
      "lamp~2 Success",
      "mug~1 Success",
      "mug~2 Success",
      "mug~3 Success",
    ]);
    const late = await runCli(["retake", "--withdraw", "shop/mug~3"], { cwd: dir, env: env(s) });
    expect(late.code).toBe(2);
    expect(late.stderr).toContain("shop/mug~3 was sent already: nothing was withdrawn");
  });

  it("refuses a take that is not there or not ended, and asks on a terminal before it is paid", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    const missing = await runCli(["retake", "shop/nope"], { cwd: dir, env: env(s) });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no job matches 'shop/nope'");
    expect((await runCli(["retake", "shop/mug~2"], { cwd: dir, env: env(s) })).code).toBe(0);
    const unsent = await runCli(["retake", "shop/mug~3"], { cwd: dir, env: env(s) });
    expect(unsent.code).toBe(2);
    expect(unsent.stderr).toContain("shop/mug~3 (unsent): not ended yet");

    // On a terminal: asked, and a no queues nothing.
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const out = new PassThrough();
    const err = new PassThrough();
    let said = "";
    err.on("data", (d: Buffer) => (said += d.toString()));
    out.resume();
    const code = main(["retake", "shop/lamp"], {
      stdin,
      stdout: out,
      stderr: err,
      env: env(s),
      cwd: dir,
      signal: new AbortController().signal,
    });
    await until(() => said.includes("Queue them? [y/N]"), "the question");
    expect(said).toContain("1 paid generation, 5 s of video");
    stdin.write("n\n");
    expect(await code).toBe(1);
    expect(said).toContain("nothing was queued");
    expect((await status(dir, s)).decisions.shop).toMatchObject({ retakesQueued: 1 });
  });

  it("stays within the budget cap, and says the cost by the price list", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    await writeTree(dir, { "prices.yaml": "version: 1\nvideo:\n  actor-2: 0.5\n" });
    const retake = await runCli(["retake", "shop/mug~2"], { cwd: dir, env: env(s) });
    expect(retake.code, retake.stderr).toBe(0);
    expect(retake.stderr).toContain("1 paid generation, 5 s of video (2.5 credits by prices.yaml)");
    const before = s.counters.generationsCreated;
    const capped = await runCli(["run", "shop.yaml", "--max-seconds", "4"], { cwd: dir, env: env(s) });
    expect(capped.code, capped.stderr).toBe(3);
    expect(s.counters.generationsCreated).toBe(before);
    expect((await runCli(["run", "shop.yaml", "--max-seconds", "5"], { cwd: dir, env: env(s) })).code).toBe(
      1,
    );
    expect(s.counters.generationsCreated).toBe(before + 1);
  });

  it("is sent once when the run sending it is killed (kill -9) and run again", async () => {
    // Tasks of a fraction of a second: the run is killed while the retake's task runs.
    const s = await sandbox({ timeScale: 0.2 });
    const dir = await ranShop(s);
    expect((await runCli(["retake", "shop/mug~2"], { cwd: dir, env: env(s) })).code).toBe(0);
    const before = s.counters.generationsCreated;
    const child = reel(["run", "shop.yaml"], dir, env(s));
    // Killed once the state records its task (before, the rerun would find it uncertain, and not
    // send it again either).
    await until(() => stateOf(dir, "shop/mug~3") === "submitted", "the retake sent", 20_000);
    expect(s.counters.generationsCreated).toBe(before + 1);
    child.child.kill("SIGKILL");
    await child.exit;
    expect(existsSync(join(dir, "out", "shop", "mug~3.mp4"))).toBe(false);
    const rerun = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(rerun.code).toBe(1);
    expect(s.counters.generationsCreated).toBe(before + 1);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(existsSync(join(dir, "out", "shop", "mug~3.mp4"))).toBe(true);
  }, 60_000);

  it("is sent by a running watch", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "incoming/shop.yaml": SHOP });
    const watch = reel(["watch", "incoming", "--settle", "100ms"], dir, env(s));
    await until(async () => {
      if (!existsSync(join(dir, "out", "results.jsonl"))) return false;
      const lines = await readResults<{ status: string }>(dir);
      return lines.length === 4 && lines.every((line) => line.status === "Success" || line.status === "Fail");
    }, "the watch to make shop's videos");
    const before = s.counters.generationsCreated;
    const retake = await runCli(["retake", "shop/mug~1", "--note", "blurry"], { cwd: dir, env: env(s) });
    expect(retake.code, retake.stderr).toBe(0);
    await until(async () => {
      const lines = await readResults<{ id: string; status: string }>(dir);
      return lines.find((line) => line.id === "mug~3")?.status === "Success";
    }, "the watch to send the retake");
    expect(s.counters.generationsCreated).toBe(before + 1);
    expect(watch.stderr()).toContain("1 retake");
    watch.child.kill("SIGINT");
    expect(await watch.exit).toBe(0);
    expect(s.counters.generationsCreated).toBe(before + 1);
  });
});
