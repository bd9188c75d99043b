// The poll benchmark: how soon a finished task is noticed, and for how many polls, side by side
// with the plain script a user would write first (a fixed pool, a poll every 2 s, then
// the download), each on a sandbox of its own with the same seed and settings (the same job runs
// as long on both: see src/sandbox/run-variation.ts). Prints figures; asserts nothing.
//
//   node bench/poll-bench.js [short|jitter|long]...        (after `npm run build`)
//   REEL_BIN=/path/to/other/bin/reel.js node bench/poll-bench.js   (another build of reel: before/after)
//
// Figures per run, from the sandbox's own clock:
// - makespan / ideal: first submission to the last task seen ended, over the sum of run times / slots;
//   also over the tighter ideal that adds each task's PreProcessing (a submission's round trip on
//   127.0.0.1 is under a millisecond, left out);
// - polls per task;
// - notice delay (ended on the service -> a poll told the client), as a fraction of the task's run
//   time: median and 95th percentile.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { startSandbox } from "../dist/sandbox/index.js";

const REPO = fileURLToPath(new URL("../", import.meta.url));
const BIN = process.env.REEL_BIN ?? join(REPO, "bin", "reel.js");
const SEED = 2020;
const SLOTS = 8;
const PRE_MS = 20;
/** Every video: 10 s of actor-2 at 720p, a text of its own. */
const VIDEO_SECONDS = 10;

const SETTINGS = {
  short: { jobs: 120, meanRunMs: 2_500, jitter: 0, targets: "reel <= 1.05x ideal, <= 3 polls/task" },
  jitter: {
    jobs: 120,
    meanRunMs: 2_500,
    jitter: 0.5,
    targets: "reel <= 1.10x ideal, <= 5 polls/task, median delay <= 6%, makespan <= 0.75x the script's",
  },
  long: {
    jobs: 32,
    meanRunMs: 20_000,
    jitter: 0.5,
    targets: "reel <= 5 polls/task, makespan no worse than the script's",
  },
};

function manifestOf(name, jobs) {
  const videos = Array.from(
    { length: jobs },
    (_, i) => `  - id: v${i}\n    chunks: [{ duration: ${VIDEO_SECONDS}, text: "shot ${i}" }]\n`,
  );
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\n  aspectRatio: "16:9"\nvideos:\n${videos.join("")}`;
}

/** The body reel sends for video i (the script sends the same, so both sandboxes draw alike). */
function bodyOf(i) {
  return {
    model: "actor-2",
    resolution: "720p",
    aspectRatio: "16:9",
    chunks: [{ duration: VIDEO_SECONDS, conditions: [{ type: "text", content: `shot ${i}` }] }],
  };
}

function sandboxOptions(setting) {
  return {
    slots: SLOTS,
    preProcessingMs: PRE_MS,
    timeScale: setting.meanRunMs / 1000 / VIDEO_SECONDS,
    jitter: setting.jitter,
    seed: SEED,
  };
}

/** reel run on a fresh state (or `dir`'s, warm), against `sandbox`. */
async function runReel(sandbox, setting, dir, name) {
  writeFileSync(join(dir, `${name}.yaml`), manifestOf(name, setting.jobs));
  const child = spawn(
    process.execPath,
    [BIN, "run", `${name}.yaml`, "--concurrency", String(SLOTS), "--state", "state.db", "--out", "out"],
    {
      cwd: dir,
      env: { PATH: process.env.PATH, REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`reel exited ${code}: ${stderr.slice(-500)}`);
}

/** The plain script: a pool of SLOTS, a poll every 2 s, then the download. */
async function runScript(sandbox, setting) {
  const headers = { authorization: `Bearer ${sandbox.apiKey}`, "content-type": "application/json" };
  let next = 0;
  async function worker() {
    while (next < setting.jobs) {
      const i = next++;
      const res = await request(`${sandbox.baseUrl}/v1/generations`, {
        method: "POST",
        headers,
        body: JSON.stringify(bodyOf(i)),
      });
      const { id } = await res.body.json();
      for (;;) {
        await sleep(2_000);
        const task = await (
          await request(`${sandbox.baseUrl}/v1/generations/${id}`, { headers })
        ).body.json();
        if (task.status === "Success") {
          await (await request(task.resultVideoURL)).body.arrayBuffer();
          break;
        }
        if (task.status === "Fail" || task.status === "Canceled") break;
      }
    }
  }
  await Promise.all(Array.from({ length: SLOTS }, worker));
}

function quantile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : Number.NaN;
}

/** The figures of one run, from the sandbox's counters. */
function figures(sandbox) {
  const tasks = [...sandbox.counters.tasks.entries()];
  const runs = tasks.map(([, t]) => t.finishedAt - t.startedAt);
  const first = Math.min(...tasks.map(([, t]) => t.createdAt));
  const last = Math.max(...tasks.map(([, t]) => t.seenFinalAt ?? t.finishedAt));
  const ideal = runs.reduce((a, b) => a + b, 0) / SLOTS;
  const tight = ideal + (tasks.length * PRE_MS) / SLOTS;
  const delays = tasks.map(([, t], i) => ((t.seenFinalAt ?? Number.NaN) - t.finishedAt) / runs[i]);
  const polls = [...sandbox.counters.pollsByTask.values()].reduce((a, b) => a + b, 0) / tasks.length;
  return {
    makespan: last - first,
    overIdeal: (last - first) / ideal,
    overTight: (last - first) / tight,
    polls,
    medianDelay: quantile(delays, 0.5),
    p95Delay: quantile(delays, 0.95),
  };
}

function row(label, f) {
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  return `| ${label} | ${(f.makespan / 1000).toFixed(1)} s | ${f.overIdeal.toFixed(3)}x | ${f.overTight.toFixed(3)}x | ${f.polls.toFixed(1)} | ${pct(f.medianDelay)} | ${pct(f.p95Delay)} |`;
}

async function bench(name) {
  const setting = SETTINGS[name];
  const dir = mkdtempSync(join(tmpdir(), "reel-poll-bench-"));
  const [forReel, forScript] = await Promise.all([
    startSandbox(sandboxOptions(setting)),
    startSandbox(sandboxOptions(setting)),
  ]);
  try {
    // Side by side: each on its own sandbox of the same seed and settings.
    await Promise.all([runReel(forReel, setting, dir, "cold"), runScript(forScript, setting)]);
    const reelCold = figures(forReel);
    const script = figures(forScript);
    // Warm: the same state again, with new videos, on the same address (what is learned is kept per
    // service): the run times it learned are its start.
    const port = Number(new URL(forReel.baseUrl).port);
    await forReel.close();
    const warmSandbox = await startSandbox({ ...sandboxOptions(setting), port, apiKey: forReel.apiKey });
    let reelWarm;
    try {
      await runReel(warmSandbox, setting, dir, "warm");
      reelWarm = figures(warmSandbox);
    } finally {
      await warmSandbox.close();
    }
    console.log(
      `\n${name}: ${setting.jobs} jobs of ${VIDEO_SECONDS} s, ${SLOTS} slots, bound ${SLOTS}, mean run ${setting.meanRunMs / 1000} s, jitter ${setting.jitter}, seed ${SEED}; targets: ${setting.targets}`,
    );
    console.log(
      "| who | makespan | / ideal | / ideal + PreProcessing | polls per task | notice delay, median | p95 |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    console.log(row(`reel${process.env.REEL_BIN ? ` (${BIN})` : ""}, new state`, reelCold));
    console.log(row("reel, state of the run before", reelWarm));
    console.log(row("script: pool, poll every 2 s", script));
    console.log(
      `reel's makespan / the script's: ${(reelCold.makespan / script.makespan).toFixed(2)} (new state), ${(reelWarm.makespan / script.makespan).toFixed(2)} (learned)`,
    );
  } finally {
    await Promise.all([forReel.close().catch(() => {}), forScript.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

const chosen = process.argv.slice(2);
for (const name of chosen.length > 0 ? chosen : Object.keys(SETTINGS)) {
  if (!(name in SETTINGS)) throw new Error(`unknown bench ${name}: ${Object.keys(SETTINGS).join(", ")}`);
  await bench(name);
}
