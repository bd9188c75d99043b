// The budget cap: `run` and `watch` with --max-seconds / --max-credits never submit past
// the cap, finish what is in flight, say what is left and exit 3; the count survives kill -9 and is
// resumed by the rerun; speech counts when priced. Real runs over HTTP on a sandbox whose tasks take
// long enough for several to be in flight at once, real files, a real child process for the kill.
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it, type TestContext } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, until, useCommands, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();
const startCommand = useCommands();
const database = usePostgres();
const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

/** A manifest of actor-2 videos at 720p, one per duration, each with its own text (or speech). */
function manifest(name: string, durations: readonly number[], speech = false): string {
  const videos = durations.map((duration, i) => {
    const chunk = speech
      ? `{ duration: ${duration}, text: "talks", speech: { voice: 17, text: "Line ${name} ${i}" } }`
      : `{ duration: ${duration}, text: "shot ${name} ${i}" }`;
    return `  - id: v${i}\n    chunks: [${chunk}]`;
  });
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

/**
 * Commands that run reel as another machine or container would: under another host name, or in a
 * PID namespace of its own (where it is pid 1, as in a container). Undefined where this user cannot
 * make namespaces: the test then writes into the store what such a run would have recorded.
 */
const NAMESPACES = {
  host: ["unshare", "--uts", "--map-root-user", "sh", "-c", 'hostname reel-elsewhere && exec "$0" "$@"'],
  pid: ["unshare", "--pid", "--fork", "--mount-proc", "--map-root-user"],
} as const;
const namespace = (kind: keyof typeof NAMESPACES): string[] | undefined => {
  const wrapper = [...NAMESPACES[kind]];
  const works =
    process.platform === "linux" &&
    spawnSync(wrapper[0]!, [...wrapper.slice(1), "true"], { stdio: "ignore" }).status === 0;
  if (!works)
    console.warn(`unshare (${kind}) is not available here: what it would record is written instead`);
  return works ? wrapper : undefined;
};

const statuses = async (dir: string): Promise<Record<string, number>> => {
  const counts: Record<string, number> = {};
  for (const r of await readResults<{ status: string }>(dir)) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

describe("the budget cap", () => {
  it("never submits past --max-seconds with 8 submissions in flight; finishes them, says what is left, exits 3", async () => {
    const s = await sandbox({ timeScale: 0.05, slots: 8 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", Array(40).fill(5)) });
    const run = await runCli(["run", "m.yaml", "--concurrency", "8", "--max-seconds", "97"], {
      cwd: dir,
      env: env(s),
    });
    expect(run.code, run.stderr).toBe(3);
    // 19 videos of 5 s fit in 97 s; the 20th would pass it, with 8 in flight at once.
    expect(secondsSent(s)).toBe(95);
    expect(s.counters.peakUnfinished).toBeGreaterThan(1);
    expect(await statuses(dir)).toEqual({ Success: 19, unsent: 21 });
    expect(run.stderr).toContain("reel run: budget: --max-seconds 97");
    expect(run.stderr).toMatch(
      /stopped before spending more: m\/v\d+ \(5 s of video\) would pass --max-seconds 97/,
    );
    expect(run.stderr).toContain("Spent: 95 s of video.");
    expect(run.stderr).toContain("Not submitted: 21 jobs, 105 s of video");
    expect(run.stderr).toContain("--max-seconds 200 covers");
  });

  it("resumes the count in a rerun with a higher cap, ends it when the work is done, and counts anew after", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", [10, 10, 10, 5, 5, 5, 5, 5, 5, 5]) });
    const run = (cap?: number): ReturnType<typeof runCli> =>
      runCli(["run", "m.yaml", ...(cap === undefined ? [] : ["--max-seconds", String(cap)])], {
        cwd: dir,
        env: env(s),
      });
    // Longest first: 10 + 10 + 10, then a 5 would pass 30.
    const first = await run(30);
    expect(first.code, first.stderr).toBe(3);
    expect(secondsSent(s)).toBe(30);
    // The rerun counts what the first sent: 20 s more fit under 50.
    const second = await run(50);
    expect(second.code, second.stderr).toBe(3);
    expect(second.stderr).toContain("30 s of video already spent by the earlier work it resumes");
    expect(secondsSent(s)).toBe(50);
    const third = await run(1_000);
    expect(third.code, third.stderr).toBe(0);
    expect(secondsSent(s)).toBe(65);
    expect(s.counters.duplicateGenerations()).toBe(0);
    // That run finished the work: the next capped run of the manifest counts from nothing.
    await writeFile(join(dir, "m.yaml"), manifest("m", [10, 10, 10, 5, 5, 5, 5, 5, 5, 5, 10]));
    const fourth = await run(10);
    expect(fourth.code, fourth.stderr).toBe(0);
    expect(fourth.stderr).not.toContain("already spent");
    expect(secondsSent(s)).toBe(75);
  });

  it("counts what a run killed with kill -9 sent: the rerun with the same cap sends only the rest", async () => {
    // Tasks of 5 s of video take 1 s: the kill comes with submissions in flight.
    const s = await sandbox({ timeScale: 0.2 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", Array(16).fill(5)) });
    const args = ["run", "m.yaml", "--concurrency", "4", "--max-seconds", "40"];
    const killed = reel(args, dir, env(s));
    await until(() => s.counters.generationsCreated >= 3, "three submissions");
    killed.child.kill("SIGKILL");
    await killed.exit;
    const sentBefore = secondsSent(s);
    const rerun = await runCli(args, { cwd: dir, env: env(s) });
    expect(rerun.code, rerun.stderr).toBe(3);
    expect(rerun.stderr).toMatch(/\d+ s of video already spent by the earlier work it resumes/);
    // Never past 40 over both runs (a submission cut off by the kill counts: it may have been paid).
    expect(secondsSent(s)).toBeLessThanOrEqual(40);
    expect(secondsSent(s)).toBeGreaterThan(sentBefore);
    expect(s.counters.duplicateGenerations()).toBe(0);
    const counts = await statuses(dir);
    expect((counts.Success ?? 0) + (counts.uncertain ?? 0)).toBe(8);
  });

  it.for(["state file", "PostgreSQL"] as const)(
    "counts what was spent at the prices it was sent at: a price cut after the cap makes no room (%s)",
    async (store, context: TestContext) => {
      const s = await sandbox({ timeScale: 0.05 });
      const dir = await tempDir();
      await writeTree(dir, {
        "m.yaml": manifest("m", Array(12).fill(5)),
        "prices.yaml": "version: 1\nvideo:\n  actor-2: 2\n",
      });
      const storeArgs = store === "PostgreSQL" ? ["--store", await database(context)] : [];
      const args = ["run", "m.yaml", ...storeArgs, "--concurrency", "4", "--max-credits", "70"];
      // 10 credits a video: seven fit in 70.
      const first = await runCli(args, { cwd: dir, env: env(s) });
      expect(first.code, first.stderr).toBe(3);
      expect(secondsSent(s)).toBe(35);
      // Half the price now: the 70 credits spent are still 70, not 35.
      await writeFile(join(dir, "prices.yaml"), "version: 1\nvideo:\n  actor-2: 1\n");
      const rerun = await runCli(args, { cwd: dir, env: env(s) });
      expect(rerun.code, rerun.stderr).toBe(3);
      expect(rerun.stderr).toContain("70 credits already spent by the earlier work it resumes");
      expect(secondsSent(s)).toBe(35);
    },
  );

  it.for([
    ["another host name", "host"],
    ["a PID namespace of its own", "pid"],
  ] as const)(
    "resumes the count of a run stopped at the cap under %s: the state file's lock says who runs, not host and pid",
    async ([, kind]) => {
      const s = await sandbox({ timeScale: 0.05 });
      const dir = await tempDir();
      await writeTree(dir, { "m.yaml": manifest("m", Array(8).fill(5)) });
      const args = ["run", "m.yaml", "--state", "state.db", "--max-seconds", "20"];
      const wrapper = namespace(kind);
      // The first run in a container (pid 1 there), or the rerun on another machine's name.
      const first = reel(args, dir, env(s), kind === "pid" ? wrapper : undefined);
      expect(await first.exit, first.stderr()).toBe(3);
      expect(secondsSent(s)).toBe(20);
      if (!wrapper) {
        const db = new Database(join(dir, "state.db"));
        db.prepare(
          `UPDATE budget_sessions SET ${kind === "host" ? "host = 'reel-elsewhere'" : "pid = 1"}`,
        ).run();
        db.close();
      }
      const rerun = reel(args, dir, env(s), kind === "host" ? wrapper : undefined);
      expect(await rerun.exit, rerun.stderr()).toBe(3);
      expect(rerun.stderr()).toContain("20 s of video already spent by the earlier work it resumes");
      expect(secondsSent(s)).toBe(20);
    },
  );

  it("on PostgreSQL, resumes the count of a runner killed on another machine once its lease tells it is gone", async (context: TestContext) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.1 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", Array(12).fill(5)) });
    const args = ["run", "m.yaml", "--store", url, "--concurrency", "4", "--max-seconds", "30"];
    // A short lease; and submissions the kill cut off (uncertain) hold no slot of the account, which
    // would otherwise keep the rerun from claiming for ten minutes if the kill met four on the wire.
    const lease = { REEL_LEASE_SECONDS: "1", REEL_UNCERTAIN_HOLD_SECONDS: "0" };
    const wrapper = namespace("host");
    const killed = reel(args, dir, { ...env(s), ...lease }, wrapper);
    await until(() => s.counters.generationsCreated >= 2, "two submissions");
    killed.child.kill("SIGKILL");
    await killed.exit;
    if (!wrapper) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("UPDATE runners SET host = 'reel-elsewhere'");
      await client.query("UPDATE budget_sessions SET host = 'reel-elsewhere'");
      await client.end();
    }
    const sentBefore = secondsSent(s);
    const rerun = await runCli(args, { cwd: dir, env: { ...env(s), ...lease } });
    expect(rerun.code, rerun.stderr).toBe(3);
    // The count resumed holds every claim the killed runner charged: what the service received, and
    // the claims the kill may have cut off before their request left (uncertain), never less.
    const resumed = Number(
      /(\d+) s of video already spent by the earlier work it resumes/.exec(rerun.stderr)?.[1],
    );
    expect(resumed).toBeGreaterThanOrEqual(sentBefore);
    expect(secondsSent(s)).toBeLessThanOrEqual(30);
    expect(s.counters.duplicateGenerations()).toBe(0);
  });

  it("in a fleet, a capped runner spends its own cap: jobs another runner claimed hold none of it", async (context: TestContext) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    // Twelve jobs both runners walk first, in the same order, then twelve only the capped one runs.
    await writeTree(dir, {
      "m.yaml": manifest("m", Array(24).fill(5)).replace(/id: v(\d+)/g, (_, i: string) =>
        Number(i) < 12 ? `id: both${i}` : `id: own${i}`,
      ),
    });
    const runner = (more: string[]): ReturnType<typeof runCli> =>
      runCli(["run", "m.yaml", "--store", url, "--concurrency", "4", ...more], { cwd: dir, env: env(s) });
    const other = runner(["--only", "m/both*"]);
    await until(() => s.counters.generationsCreated >= 4, "the other runner submitting");
    const capped = await runner(["--max-seconds", "20"]);
    // It stops at its own cap, having sent 20 s of the jobs only it runs; before, it stopped at
    // once, holding the budget for jobs the other runner then sent ("Spent: 0 s").
    expect(capped.code, capped.stderr).toBe(3);
    expect(capped.stderr).toContain("Spent: 20 s of video.");
    expect((await other).code).toBe(0);
    expect(s.counters.duplicateGenerations()).toBe(0);
    // The help of --max-seconds says what the cap covers in a fleet.
    const help = (await runCli(["run", "--help"], { cwd: dir })).stdout.replace(/\s+/g, " ");
    expect(help).toMatch(
      /--max-seconds N [^]* In a fleet \(--store postgres:\/\/\.\.\.\) the cap is per runner: it counts what this runner submits[^]* --max-credits N/,
    );
  });

  it("on a PostgreSQL store too: a runner killed with kill -9 and started again counts what it sent", async (context: TestContext) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.2 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", Array(12).fill(5)) });
    const args = ["run", "m.yaml", "--store", url, "--concurrency", "4", "--max-seconds", "30"];
    // Submissions the kill cut off (uncertain) hold no slot of the account: else, had the kill met
    // four on the wire, the rerun could claim nothing for ten minutes.
    const lease = { REEL_LEASE_SECONDS: "2", REEL_UNCERTAIN_HOLD_SECONDS: "0" };
    const killed = reel(args, dir, { ...env(s), ...lease });
    await until(() => s.counters.generationsCreated >= 2, "two submissions").catch((e) => {
      console.log(`the killed run said:\n${killed.stderr()}`);
      throw e;
    });
    killed.child.kill("SIGKILL");
    await killed.exit;
    const rerun = await runCli(args, { cwd: dir, env: { ...env(s), ...lease } });
    expect(rerun.code, rerun.stderr).toBe(3);
    expect(rerun.stderr).toMatch(/\d+ s of video already spent by the earlier work it resumes/);
    expect(secondsSent(s)).toBeLessThanOrEqual(30);
    expect(s.counters.duplicateGenerations()).toBe(0);
  });

  it("counts speech under --max-credits when the list prices it, and makes none for a video it will not send", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, {
      "m.yaml": manifest("m", Array(6).fill(5), true),
      "prices.yaml": "version: 1\nvideo:\n  actor-2: 1\nspeech: 2\n",
    });
    // Each video: 5 credits, and 2 for its speech. Two fit in 20; a third would take 21.
    const run = await runCli(["run", "m.yaml", "--max-credits", "20", "--json"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(3);
    expect(s.counters.generationsCreated).toBe(2);
    expect(s.counters.speechByInput.size).toBe(2);
    const doc = JSON.parse(run.stdout) as {
      outcome: string;
      budget: { spent: { credits: number }; left: { jobs: number } };
      nextSteps: { code: string }[];
    };
    expect(doc.outcome).toBe("capped");
    expect(doc.budget.spent.credits).toBe(14);
    expect(doc.budget.left.jobs).toBe(4);
    expect(doc.nextSteps.map((step) => step.code)).toContain("RAISE_BUDGET");
  });

  it("advises the cap that covers the whole count, speech included: a rerun with exactly it finishes within it", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    // 12 videos of 5 and 10 s, each with a line of its own: 90 s x 2.1 + 12 x 0.35 = 193.2 credits.
    await writeTree(dir, {
      "m.yaml": manifest(
        "m",
        Array.from({ length: 12 }, (_, i) => (i % 2 ? 10 : 5)),
        true,
      ),
      "prices.yaml": "version: 1\nvideo:\n  actor-2: 2.1\nspeech: 0.35\n",
    });
    const credits = (): number => secondsSent(s) * 2.1 + s.counters.speechByInput.size * 0.35;
    const run = (cap: number): ReturnType<typeof runCli> =>
      runCli(["run", "m.yaml", "--concurrency", "4", "--max-credits", String(cap)], {
        cwd: dir,
        env: env(s),
      });
    const first = await run(50);
    expect(first.code, first.stderr).toBe(3);
    // The advice is the last cap the output names.
    const advised = Number([...first.stderr.matchAll(/--max-credits (\d+)/g)].at(-1)![1]);
    expect(advised).toBe(194);
    // Past the note that the budget is reached, only the submissions it names as on their way.
    const lines = first.stderr.split("\n");
    const note = lines.findIndex((line) => line.includes("budget reached"));
    expect(note, first.stderr).toBeGreaterThanOrEqual(0);
    for (const line of lines.slice(note + 1)) {
      const key = /^\[[^\]]*\] submitted +(\S+)/.exec(line)?.[1];
      if (key) expect(lines[note], first.stderr).toContain(key);
    }
    const rerun = await run(advised);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await statuses(dir)).toEqual({ Success: 12 });
    expect(credits()).toBeLessThanOrEqual(advised);
  });

  it("refuses a cap it cannot count before anything is sent: no price list, a model not priced, not a number", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", [5]) });
    const noList = await runCli(["run", "m.yaml", "--max-credits", "10"], { cwd: dir, env: env(s) });
    expect(noList.code).toBe(2);
    expect(noList.stderr).toContain("--max-credits needs a price list");
    await writeFile(join(dir, "prices.yaml"), "version: 1\nvideo:\n  avatar-h1: 1\n");
    const unpriced = await runCli(["run", "m.yaml", "--max-credits", "10"], { cwd: dir, env: env(s) });
    expect(unpriced.code).toBe(2);
    expect(unpriced.stderr).toContain(
      "--max-credits cannot count what prices.yaml does not price: actor-2 at 720p",
    );
    const zero = await runCli(["run", "m.yaml", "--max-seconds", "0"], { cwd: dir, env: env(s) });
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("expected --max-seconds to be a number above 0, got '0'");
    expect(s.counters.requests.size).toBe(0);
    // A run without a cap reads no price list: a broken one does not stop it.
    await writeFile(join(dir, "prices.yaml"), "version: 1\nvideo: [oops\n");
    const uncapped = await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    expect(uncapped.code, uncapped.stderr).toBe(0);
  });

  it("caps a watch per session: stops at the cap with exit 3 once its tasks are done; started again it goes on counting", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "incoming/.keep": "" });
    const watch = (cap: number): ReturnType<typeof startCommand> =>
      startCommand(["watch", "incoming", "--settle", "100ms", "--max-seconds", String(cap)], {
        cwd: dir,
        env: env(s),
      });
    const first = watch(12);
    await writeFile(join(dir, "incoming", "a.yaml"), manifest("a", [5, 5, 5, 5]));
    // Two videos fit in 12 s; the third would pass it: the watch ends by itself.
    expect(await first.exited).toBe(3);
    expect(first.output().stderr).toContain("would pass --max-seconds 12");
    expect(secondsSent(s)).toBe(10);
    expect(await statuses(dir)).toEqual({ Success: 2, unsent: 2 });
    // Started again with 17: the 10 s already sent count, so one more video fits, then it stops.
    const second = watch(17);
    expect(await second.exited).toBe(3);
    expect(second.output().stderr).toContain("10 s of video already spent");
    expect(secondsSent(s)).toBe(15);
    // A clean stop ends the session: the next watch counts from nothing.
    const third = watch(100);
    await until(() => secondsSent(s) === 20, "the last video sent");
    const stopped = await third.stop();
    expect(stopped.code, stopped.stderr).toBe(0);
    const fourth = watch(5);
    await writeFile(join(dir, "incoming", "b.yaml"), manifest("b", [5]));
    await until(() => secondsSent(s) === 25, "b's video sent under a fresh count");
    expect((await fourth.stop()).code).toBe(0);
  });
});
