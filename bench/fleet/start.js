// `start` and `warmup`, and the scaling round's start figure: what a runner costs once, apart from
// what each job costs.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "../../dist/sandbox/index.js";
import { childrenCpu, threadCpu } from "./cpu.js";
import { storeFor } from "./databases.js";
import { percentile } from "./figures.js";
import { manifestOf, round, runReel } from "./runners.js";
import { BASELINE, BIN, SLOTS, TIME_SCALE, nodeFlags, runnerEnv, scaleDurations } from "./settings.js";

/**
 * One runner's start and stop around one job, in a folder and a database of its own, and `reel
 * --version` after it: the CPU of each (seconds), PostgreSQL's serving the run beside.
 */
async function oneJobStart(sandbox, bin) {
  const dir = mkdtempSync(join(tmpdir(), "reel-fleet-bench-"));
  try {
    writeFileSync(
      join(dir, "one.yaml"),
      manifestOf("one", 1, () => [5]),
    );
    const db = await storeFor(bin);
    const r = await round({
      db,
      runners: 1,
      split: true,
      manifests: ["one"],
      sandbox,
      dir,
      concurrency: SLOTS,
      out: join(dir, "out"),
      bin,
    });
    const v0 = childrenCpu();
    await new Promise((resolve) =>
      spawn(process.execPath, [...nodeFlags(bin), bin, "--version"], { stdio: "ignore" }).on(
        "close",
        resolve,
      ),
    );
    return { runner: r.runnerCpu, pg: r.server.seconds, version: childrenCpu() - v0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The CPU of one `reel run` of one job on a fresh PostgreSQL database (the runner's and the
 * database's), the least of three: what a runner costs whatever its number of jobs. And of `reel
 * --version`, the least of three.
 */
export async function startCost(bin) {
  let best = { runner: Infinity, pg: Infinity, version: Infinity };
  for (let i = 0; i < 3; i++) {
    const sandbox = await startSandbox({ slots: SLOTS, timeScale: TIME_SCALE, preProcessingMs: 0 });
    try {
      const one = await oneJobStart(sandbox, bin);
      best = {
        runner: Math.min(best.runner, one.runner),
        pg: Math.min(best.pg, one.pg),
        version: Math.min(best.version, one.version),
      };
    } finally {
      await sandbox.close();
    }
  }
  return best;
}

/**
 * `start` (only when asked): a runner's start and stop around one job, as startCost, but
 * BENCH_FLEET_START_ROUNDS times (default 10), this build and BENCH_FLEET_BASELINE's alternated
 * (which goes first alternates too), each run in a folder and a database of its own: the medians,
 * and the range, so that a change of some tens of ms shows through a shared machine's noise.
 */
export async function startRounds() {
  const rounds = Number(process.env.BENCH_FLEET_START_ROUNDS ?? 10);
  const builds = [{ bin: BIN, tag: "" }];
  if (BASELINE) builds.unshift({ bin: BASELINE, tag: " (baseline)" });
  const runs = new Map(builds.map((b) => [b.tag, { runner: [], pg: [], version: [] }]));
  const sandbox = await startSandbox({ slots: SLOTS, timeScale: TIME_SCALE, preProcessingMs: 0 });
  try {
    for (let i = 0; i < rounds; i++) {
      for (const build of i % 2 ? [...builds].reverse() : builds) {
        const one = await oneJobStart(sandbox, build.bin);
        const run = runs.get(build.tag);
        run.runner.push(one.runner);
        run.pg.push(one.pg);
        run.version.push(one.version);
      }
    }
  } finally {
    await sandbox.close();
  }
  const ms = (s) => `${(s * 1000).toFixed(0)} ms`;
  return builds.map(({ tag }) => {
    const { runner, pg, version } = runs.get(tag);
    return [
      `start: a runner's start and stop, PostgreSQL, one job, median of ${rounds}${tag}`,
      `${ms(percentile(runner, 0.5))} CPU (${ms(Math.min(...runner))} to ${ms(Math.max(...runner))}) + PostgreSQL ${ms(percentile(pg, 0.5))}; reel --version ${ms(percentile(version, 0.5))}`,
    ];
  });
}

/**
 * `warmup` (only when named): what a runner costs once (its start, and its first jobs run before V8
 * has optimized its code) apart from what each job costs, fitted from one runner alone on two job
 * counts (BENCH_FLEET_WARMUP_JOBS, default "104,400"; BENCH_FLEET_WARMUP_ROUNDS runs of each,
 * default 3, alternated), its threads' CPU read every 5 ms: the main thread apart from the others
 * (V8's compiler and GC helpers, libuv's pool). Each job count a round as the scaling round's.
 */
export async function warmupRounds() {
  const counts = (process.env.BENCH_FLEET_WARMUP_JOBS ?? "104,400").split(",").map(Number);
  const rounds = Number(process.env.BENCH_FLEET_WARMUP_ROUNDS ?? 3);
  const runs = new Map(counts.map((n) => [n, []]));
  for (let i = 0; i < rounds; i++) {
    for (const n of i % 2 ? [...counts].reverse() : counts) {
      const sandbox = await startSandbox({ slots: SLOTS, timeScale: TIME_SCALE, preProcessingMs: 0 });
      const dir = mkdtempSync(join(tmpdir(), "reel-fleet-bench-"));
      try {
        writeFileSync(join(dir, "w.yaml"), manifestOf("w", n, scaleDurations));
        const db = await storeFor(BIN);
        const env = runnerEnv({
          REEL_BASE_URL: sandbox.baseUrl,
          REEL_API_KEY: sandbox.apiKey,
          REEL_STORE: db.url,
        });
        const threads = threadCpu(5);
        const args = [join(dir, "w.yaml"), "--concurrency", String(SLOTS), "--out", join(dir, "out")];
        const result = await runReel(join(dir, "runner"), args, env, BIN, false, threads.add);
        if (result.code !== 0)
          throw new Error(`the warm-up round's runner exited with ${result.code}: ${result.stderr}`);
        runs.get(n).push(threads.totals());
      } finally {
        await sandbox.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const median = (n, part) =>
    percentile(
      runs.get(n).map((r) => r[part]),
      0.5,
    );
  const ms = (s) => `${(s * 1000).toFixed(0)} ms`;
  const rows = counts.map((n) => [
    `warmup: one runner alone on ${n} jobs, PostgreSQL: main thread / other threads, median of ${rounds}`,
    `${ms(median(n, "main"))} / ${ms(median(n, "others"))}`,
  ]);
  const [a, b] = [counts[0], counts[counts.length - 1]];
  const fit = (part) => {
    const perJob = (median(b, part) - median(a, part)) / (b - a);
    return { perJob, once: median(a, part) - a * perJob };
  };
  const main = fit("main");
  const others = fit("others");
  rows.push([
    `warmup: a runner's CPU once + per job (fitted on ${a} and ${b} jobs), main thread; other threads`,
    `${ms(main.once)} + ${(main.perJob * 1000).toFixed(2)} ms a job; ${ms(others.once)} + ${(others.perJob * 1000).toFixed(2)} ms a job`,
  ]);
  return rows;
}
