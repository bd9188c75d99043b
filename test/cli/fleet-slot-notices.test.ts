// A slot of the account that one runner of a fleet frees and does not use again is claimed by a
// waiting runner at once (LISTEN/NOTIFY: state/pg/slot-notices.ts), not at its next timed claim
// (250 to 750 ms later); with its notices lost (the listening session ended again and again), within
// a second still. Four real runners (in-process `reel run`), one job each, on one PostgreSQL store
// with a bound of one: three hand-overs of the one slot, timed from the store's own events.
import pg from "pg";
import { describe, expect, it, type TestContext } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { APPLICATION_NAME } from "../../src/state/pg/slot-notices.js";
import { runCli, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();
const database = usePostgres();
const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

const oneVideo = (name: string): string => `version: 1
name: ${name}
videos:
  - id: v
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "${name} waves"
`;

const NAMES = ["a", "b", "c", "d"];

/** Four runners at --concurrency 1, one job each: the slot handed over three times. */
async function runFour(url: string, s: Sandbox): Promise<void> {
  const dir = await tempDir();
  await writeTree(dir, Object.fromEntries(NAMES.map((n) => [`${n}.yaml`, oneVideo(n)])));
  const runs = await Promise.all(
    NAMES.map((n) =>
      runCli(["run", `${n}.yaml`, "--store", url, "--concurrency", "1", "--out", `out-${n}`], {
        cwd: dir,
        env: env(s),
      }),
    ),
  );
  for (const run of runs) expect(run.code, run.stderr).toBe(0);
  expect(s.counters.peakUnfinished).toBe(1);
  expect(s.counters.generationsCreated).toBe(4);
}

/** Milliseconds from each job's final status to the next job's claim, as the store recorded them. */
async function handOvers(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ claimed: string; ended: string }>(
      `SELECT min(at) FILTER (WHERE kind = 'submitting') AS claimed,
              max(at) FILTER (WHERE kind = 'status' AND detail IN ('Success', 'Fail')) AS ended
         FROM events WHERE job_id IS NOT NULL GROUP BY job_id ORDER BY claimed`,
    );
    return rows.slice(1).map((row, i) => Number(row.claimed) - Number(rows[i]!.ended));
  } finally {
    await client.end();
  }
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe("a freed slot of the account, in a fleet", () => {
  it("is claimed by a waiting runner within 100 ms (LISTEN/NOTIFY)", async (context: TestContext) => {
    const url = await database(context);
    // 5 s videos at 0.05: tasks of 250 ms, each runner's waiting job on the line meanwhile.
    const s = await sandbox({ timeScale: 0.05 });
    await runFour(url, s);
    const gaps = await handOvers(url);
    expect(gaps).toHaveLength(3);
    // Before the notices: 0 to 750 ms each, at the next timed claim of a waiting runner.
    expect(median(gaps), `hand-overs ${gaps.join(", ")} ms`).toBeLessThan(100);
  });

  it("is claimed within a second when the notices are lost", async (context: TestContext) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05 });
    // Every listening session ended as soon as it listens: no notice reaches a runner.
    const killer = new pg.Client({ connectionString: url });
    await killer.connect();
    const database_ = new URL(url).pathname.slice(1);
    let killing = true;
    let killed = 0;
    const killLoop = (async () => {
      while (killing) {
        const { rows } = await killer.query<{ ended: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
            WHERE datname = $1 AND application_name = $2`,
          [database_, APPLICATION_NAME],
        );
        killed += rows.filter((r) => r.ended).length;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    try {
      await runFour(url, s);
    } finally {
      killing = false;
      await killLoop;
      await killer.end();
    }
    expect(killed).toBeGreaterThan(0);
    const gaps = await handOvers(url);
    expect(gaps).toHaveLength(3);
    for (const gap of gaps) expect(gap, `hand-overs ${gaps.join(", ")} ms`).toBeLessThan(1_000);
  });

  it("is told to nobody by a runner alone on its service", async (context: TestContext) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, {
      "a.yaml": oneVideo("a").replace(
        /videos:\n[^]*$/,
        (videos) => videos + videos.slice(8).replace("id: v", "id: w"),
      ),
    });
    // What the runners say on the channel, heard as another session would.
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (message) => heard.push((message.payload ?? "").split(" ")[2] ?? ""));
    await listener.query("LISTEN reel_slot_free");
    try {
      const run = await runCli(["run", "a.yaml", "--store", url, "--concurrency", "1"], {
        cwd: dir,
        env: env(s),
      });
      expect(run.code, run.stderr).toBe(0);
      expect(s.counters.generationsCreated).toBe(2);
    } finally {
      await listener.end();
    }
    // It said it was there when it started; of its two freed slots, nothing.
    expect(heard).toEqual(["hello"]);
  });
  // Runners that start together greet each other at once: each answers every "hello" on its one
  // listening session, and a query sent there while others wait made the driver print a
  // DeprecationWarning on the runner's screen (and will fail in its next major version).
  it("is listened for by a runner that answers a burst of other runners' greetings one at a time, printing nothing of it", async (context: TestContext) => {
    const url = await database(context);
    // A 5 s video at 0.2: the runner listens for a second.
    const s = await sandbox({ timeScale: 0.2 });
    const dir = await tempDir();
    await writeTree(dir, { "a.yaml": oneVideo("a") });
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const heard: string[][] = [];
    let onHeard = (): void => {};
    listener.on("notification", (message) => {
      heard.push((message.payload ?? "").split(" "));
      onHeard();
    });
    const until = (done: () => boolean): Promise<void> =>
      new Promise((resolve) => {
        onHeard = () => done() && resolve();
        onHeard();
      });
    try {
      await listener.query("LISTEN reel_slot_free");
      const runner = reel(["run", "a.yaml", "--store", url, "--concurrency", "1"], dir, env(s));
      await Promise.race([until(() => heard.some((words) => words[2] === "hello")), runner.exit]);
      const [service, runnerId] = heard.find((words) => words[2] === "hello") ?? [];
      expect(runnerId, runner.stderr()).toBeDefined();
      // Five runners of its service greeting it in one commit: five notices at once.
      const others = [9001, 9002, 9003, 9004, 9005];
      await listener.query(
        `SELECT ${others.map((_, i) => `pg_notify('reel_slot_free', $${i + 1})`).join(", ")}`,
        others.map((other) => `${service} ${other} hello`),
      );
      const answers = (): string[][] => heard.filter((w) => w[1] === runnerId && w[2] === "here");
      await Promise.race([until(() => answers().length === others.length), runner.exit]);
      expect(answers()).toHaveLength(others.length);
      expect(await runner.exit, runner.stderr()).toBe(0);
      expect(runner.stderr()).not.toMatch(/Warning/);
    } finally {
      await listener.end();
    }
  });
});
