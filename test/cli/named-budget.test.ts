// A named budget (reel budget set NAME): one cap for every run and watch that names it, kept in the
// store. Real runs over HTTP on a sandbox whose tasks take long enough for several to be in flight,
// a real state file written beside a watch that holds it, real PostgreSQL with three real runner
// processes and a kill -9.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it, type TestContext } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { MIGRATIONS } from "../../src/state/sqlite/migrations.js";
import { PG_MIGRATIONS } from "../../src/state/pg/migrations.js";
import { runCli, until, useCommands, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();
const startCommand = useCommands();
const database = usePostgres();
const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

/** A manifest of `count` actor-2 videos of 5 s at 720p, each with its own text. */
function manifest(name: string, count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks: [{ duration: 5, text: "shot ${name} ${i}" }]`,
  );
  return [
    "version: 1",
    `name: ${name}`,
    "defaults:",
    "  model: actor-2",
    "  resolution: 720p",
    "videos:",
    ...videos,
  ].join("\n");
}

/** Seconds of video the service was asked to generate, from its own count of the bodies it took. */
function secondsSent(s: Sandbox): number {
  let total = 0;
  for (const [body, count] of s.counters.generationsByBody) {
    const { chunks } = JSON.parse(body) as { chunks: { duration: number }[] };
    total += count * chunks.reduce((sum, chunk) => sum + chunk.duration, 0);
  }
  return total;
}

/** `reel budget show NAME --json`'s budget. */
async function shown(
  name: string,
  cwd: string,
  more: string[] = [],
): Promise<{
  spent: { seconds: number; credits: number };
  left: { seconds: number | null; credits: number | null };
}> {
  const show = await runCli(["budget", "show", name, "--json", ...more], { cwd });
  expect(show.code, show.stderr).toBe(0);
  return (JSON.parse(show.stdout) as { budgets: [never] }).budgets[0];
}

describe("a named budget", () => {
  it("on a state file: runs of the project share it, stop at it with exit 3; set beside a watch that holds the file, the watch reads the new cap", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, {
      "reel.yaml": "version: 1\nbudget: team\n",
      "m.yaml": manifest("m", 8),
      "n.yaml": manifest("n", 4),
      "incoming/.keep": "",
    });
    // Named in reel.yaml before it exists: refused, nothing sent.
    const unset = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain("no budget named 'team' in the store: set it first");
    expect(s.counters.requests.size).toBe(0);
    const set = await runCli(["budget", "set", "team", "--max-seconds", "22"], { cwd: dir });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain("created team: --max-seconds 22; 0 s of video spent, 22 s left");

    // Four videos of 5 s fit in 22; the fifth would pass it, with four in flight at once.
    const first = await runCli(["run", "m.yaml", "--concurrency", "4"], { cwd: dir, env: env(s) });
    expect(first.code, first.stderr).toBe(3);
    expect(secondsSent(s)).toBe(20);
    expect(first.stderr).toContain("budget 'team' (--max-seconds 22), shared by every run that names it");
    expect(first.stderr).toMatch(
      /stopped before spending more: m\/v\d \(5 s of video\) would pass the budget 'team'/,
    );
    expect(first.stderr).toContain("reel budget set team --max-seconds 40 covers");
    // plan says what is left of it, and what the run would spend.
    const plan = await runCli(["plan", "m.yaml"], { cwd: dir, env: env(s) });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      "budget 'team' (--max-seconds 22): 20 s of video spent, 2 s left; this run would spend 20 s of video from it, more than is left",
    );
    const planJson = await runCli(["plan", "n.yaml", "--json"], { cwd: dir, env: env(s) });
    expect(JSON.parse(planJson.stdout)).toMatchObject({
      budget: { name: "team", left: { seconds: 2 }, wouldSpend: { seconds: 20 }, fits: false },
    });
    // Another run of the project spends from the same budget: 2 s left, so nothing.
    const second = await runCli(["run", "n.yaml"], { cwd: dir, env: env(s) });
    expect(second.code, second.stderr).toBe(3);
    expect(secondsSent(s)).toBe(20);
    expect(await shown("team", dir)).toMatchObject({ spent: { seconds: 20 }, left: { seconds: 2 } });

    // A watch holds the state file; `budget set` writes beside it, and its next claim reads it.
    const watch = startCommand(["watch", "incoming", "--settle", "100ms"], { cwd: dir, env: env(s) });
    await until(() => watch.output().stderr.includes("budget 'team'"), "the watch started");
    const raised = await runCli(["budget", "set", "team", "--max-seconds", "32"], { cwd: dir });
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stderr).toContain("changed team: --max-seconds 32; 20 s of video spent, 12 s left");
    await writeFile(join(dir, "incoming", "w.yaml"), manifest("w", 3));
    expect(await watch.exited).toBe(3);
    expect(secondsSent(s)).toBe(30);
    expect(watch.output().stderr).toContain("would pass the budget 'team' (--max-seconds 32)");

    // Raised, the stopped runs go on when rerun.
    expect((await runCli(["budget", "set", "team", "--max-seconds", "100"], { cwd: dir })).code).toBe(0);
    const rerun = await runCli(["run", "m.yaml", "n.yaml"], { cwd: dir, env: env(s) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(secondsSent(s)).toBe(70);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(await shown("team", dir)).toMatchObject({ spent: { seconds: 70 }, left: { seconds: 30 } });
    // Per-run caps keep working beside it.
    await writeFile(join(dir, "o.yaml"), manifest("o", 3));
    const capped = await runCli(["run", "o.yaml", "--max-seconds", "5"], { cwd: dir, env: env(s) });
    expect(capped.code, capped.stderr).toBe(3);
    expect(capped.stderr).toContain("would pass --max-seconds 5");
    expect(secondsSent(s)).toBe(75);
  });

  it("in credits keeps the price list it was set with: every run prices by it, whatever prices.yaml says later", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, {
      "m.yaml": manifest("m", 6),
      "team-prices.yaml": "version: 1\nvideo:\n  actor-2: 2\n",
    });
    const set = await runCli(
      ["budget", "set", "team", "--max-credits", "35", "--prices", "team-prices.yaml"],
      {
        cwd: dir,
      },
    );
    expect(set.code, set.stderr).toBe(0);
    // A price list beside the project that says otherwise is not the budget's.
    await writeFile(join(dir, "team-prices.yaml"), "version: 1\nvideo:\n  actor-2: 0.1\n");
    const run = await runCli(["run", "m.yaml", "--budget", "team"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(3);
    // 10 credits a video: three fit in 35.
    expect(secondsSent(s)).toBe(15);
    expect(await shown("team", dir)).toMatchObject({ spent: { credits: 30 }, left: { credits: 5 } });
  });

  it("on PostgreSQL: three runners sharing it under concurrency never pass it, a kill -9 of one loses no spend", async (context: TestContext) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.1, slots: 12 });
    const dir = await tempDir();
    // Each runner its own manifest (80 s, more than the budget): they meet on the budget alone.
    await writeTree(dir, {
      "a.yaml": manifest("a", 16),
      "b.yaml": manifest("b", 16),
      "c.yaml": manifest("c", 16),
    });
    const set = await runCli(["budget", "set", "team", "--max-seconds", "62", "--store", url], { cwd: dir });
    expect(set.code, set.stderr).toBe(0);
    // A short lease, and submissions the kill cut off (uncertain) hold no slot of the account.
    const lease = { REEL_LEASE_SECONDS: "1", REEL_UNCERTAIN_HOLD_SECONDS: "0" };
    const args = (name: string) => [
      "run",
      `${name}.yaml`,
      "--store",
      url,
      "--budget",
      "team",
      "--concurrency",
      "4",
    ];
    const runners = ["a", "b", "c"].map((name) => reel(args(name), dir, { ...env(s), ...lease }));
    await until(() => s.counters.generationsCreated >= 3, "three submissions");
    runners[0]!.child.kill("SIGKILL");
    expect(await runners[0]!.exit).toBeNull();
    for (const runner of runners.slice(1)) expect(await runner.exit, runner.stderr()).toBe(3);
    expect(runners[1]!.stderr() + runners[2]!.stderr()).toContain("would pass the budget 'team'");
    // Never past 62 s, with twelve requests at once; the service was asked for no more than was spent.
    expect(secondsSent(s)).toBeLessThanOrEqual(60);
    expect(s.counters.duplicateGenerations()).toBe(0);
    const budget = await shown("team", dir, ["--store", url]);
    expect(budget.spent.seconds).toBeLessThanOrEqual(62);
    expect(budget.spent.seconds).toBeGreaterThanOrEqual(secondsSent(s));
    // What was spent is exactly the jobs claimed, the killed runner's included: none lost.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(
        "SELECT count(*) AS n FROM jobs WHERE state <> 'pending'",
      );
      expect(budget.spent.seconds).toBe(5 * Number(rows[0]!.n));
    } finally {
      await client.end();
    }
  });

  it("moves the store past every earlier reel's schema: such a runner is refused (exit 2), sending nothing", async (context: TestContext) => {
    const url = await database(context, { empty: true });
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", 2) });
    expect(
      (await runCli(["budget", "set", "team", "--max-seconds", "5", "--store", url], { cwd: dir })).code,
    ).toBe(0);
    expect((await runCli(["budget", "set", "team", "--max-seconds", "5"], { cwd: dir })).code).toBe(0);
    // Every reel before named budgets knows the migrations before them, and no more.
    const earlierPg = PG_MIGRATIONS.list.findIndex((sql) => sql.includes("CREATE TABLE budgets"));
    const earlierFile = MIGRATIONS.findIndex((sql) => sql.includes("CREATE TABLE budgets"));
    expect(earlierPg).toBeGreaterThan(0);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ v: number }>("SELECT max(version) AS v FROM reel_schema");
      expect(rows[0]!.v).toBeGreaterThan(earlierPg);
    } finally {
      await client.end();
    }
    const db = new Database(join(dir, ".reel", "state.db"), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBeGreaterThan(earlierFile);
    db.close();
    // A runner that knows fewer migrations than the store has (an earlier reel, here a store one
    // migration ahead of this one) refuses it before anything is sent.
    const ahead = new pg.Client({ connectionString: url });
    await ahead.connect();
    await ahead.query("INSERT INTO reel_schema (version) VALUES ($1)", [PG_MIGRATIONS.list.length + 1]);
    await ahead.end();
    const older = await runCli(["run", "m.yaml", "--store", url, "--budget", "team"], {
      cwd: dir,
      env: env(s),
    });
    expect(older.code).toBe(2);
    expect(older.stderr).toMatch(/newer than this reel knows/);
    expect(s.counters.requests.size).toBe(0);
  });
});
