// Engine benchmarks. Prints figures; asserts nothing (CI machines are noisy).
//   node bench/engine-bench.js [makespan|overhead|hashing|resume|metrics]...   (after `npm run build`)
//   BENCH_JOBS=5000,40000,100000 node bench/engine-bench.js overhead   (one process per size, on
//   tmpfs when there is one: each size's own peak RSS, wall and CPU per job, and its rerun)
//   BENCH_AGAINST=OTHER/bin/reel.js node bench/engine-bench.js overhead resume   (the rerun with
//   another build too, e.g. main's, on a copy of the same state: side by side in one run)
import "./tuned-heap.js"; // first: as the CLI's own start does
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makeCachedHasher } from "../dist/engine/cached-file-hash.js";
import { openNoFollow, stampOf } from "../dist/manifest/validate/media-file.js";
import { startSandbox } from "../dist/sandbox/index.js";
import { StateStore } from "../dist/state/sqlite/store.js";
import { timedStore } from "../dist/metrics/store-timing.js";
import {
  benchMetrics,
  BIN,
  childSandbox,
  clientOf,
  loadJobs,
  manifestOf,
  median,
  runOnSandbox,
} from "./batch-on-sandbox.js";
import { floor } from "./http-floor.js";

async function makespan() {
  const TIME_SCALE = 0.1;
  const sandbox = await startSandbox({ slots: 8, timeScale: TIME_SCALE, preProcessingMs: 0 });
  const dir = mkdtempSync(join(tmpdir(), "reel-bench-"));
  try {
    // 200 jobs of 5 to 30 seconds of video (one to three chunks of 5 or 10 s).
    const durations = (i) => Array.from({ length: 1 + (i % 3) }, (_, c) => ((i + c) % 2 ? 5 : 10));
    writeFileSync(join(dir, "m.yaml"), manifestOf("makespan", 200, durations));
    const jobs = await loadJobs(dir, "m.yaml");
    const runMs = jobs.map((j) => j.seconds * TIME_SCALE * 1000);
    const ideal = Math.max(runMs.reduce((a, b) => a + b, 0) / 8, Math.max(...runMs));
    const store = StateStore.open(join(dir, "state.db"), { baseUrl: sandbox.baseUrl });
    const client = clientOf(sandbox);
    const started = Date.now();
    const summary = await runOnSandbox(sandbox, dir, { jobs, client, store, concurrency: 8 });
    const wall = Date.now() - started;
    const ok = jobs.length - summary.notDone.length;
    const polls = [...sandbox.counters.pollsByTask.values()];
    const delays = [...sandbox.counters.tasks.values()]
      .filter((t) => t.finishedAt !== undefined && t.firstDownloadAt !== undefined)
      .map((t) => t.firstDownloadAt - t.finishedAt);
    await store.close();
    await client.close();
    return [
      ["makespan: jobs done", `${ok}/200`],
      [
        "makespan: wall / ideal",
        `${(wall / 1000).toFixed(2)} s / ${(ideal / 1000).toFixed(2)} s = ${(wall / ideal).toFixed(3)}`,
      ],
      ["makespan: status polls per task", (polls.reduce((a, b) => a + b, 0) / polls.length).toFixed(2)],
      ["makespan: median finish -> download start", `${median(delays)} ms`],
    ];
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * 10,000 instant jobs: reel's CPU and peak RSS. `base`: where the state and output go. On a disk,
 * the file system's cost of creating two files per job counts too (on some ext4 set-ups, with many
 * files deleted recently, more than reel's own); on tmpfs it does not.
 */
async function overhead(base, label) {
  const N = Number(process.env.BENCH_JOBS ?? 10_000);
  const sandbox = await childSandbox(["--slots", "1000", "--time-scale", "0"]);
  const dir = mkdtempSync(join(base, "reel-bench-"));
  try {
    writeFileSync(
      join(dir, "m.yaml"),
      manifestOf("overhead", N, () => [5]),
    );
    const cpu0 = process.cpuUsage();
    const started = Date.now();
    // The peak before results.jsonl and index.html are written (the run's end calls stop first).
    let engineRss;
    const progress = {
      start() {},
      event() {},
      stop() {
        engineRss = process.resourceUsage().maxRSS;
      },
    };
    let jobs = await loadJobs(dir, "m.yaml");
    const store = StateStore.open(join(dir, "state.db"), { baseUrl: sandbox.baseUrl });
    const client = clientOf(sandbox);
    const running = runOnSandbox(sandbox, dir, {
      jobs,
      client,
      store,
      concurrency: 64,
      downloadConcurrency: 16,
      progress,
    });
    // Let go once handed over, as `reel run` does (src/cli/run-command.ts): the engine's queue alone
    // holds each job until its work is done (the bench held all 100,000 to its end, some 45 MB).
    jobs = undefined;
    const summary = await running;
    const cpu = process.cpuUsage(cpu0);
    const wall = Date.now() - started;
    const ok = N - summary.notDone.length;
    await store.close();
    await client.close();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    // Keep this state for the resume bench.
    return {
      dir,
      rows: [
        [
          `overhead ${label}: jobs done`,
          `${ok}/${N} in ${(wall / 1000).toFixed(1)} s (wall per job ${(wall / N).toFixed(2)} ms)`,
        ],
        [
          `overhead ${label}: reel CPU per job (load, state, HTTP, download)`,
          `${(cpuMs / N).toFixed(3)} ms (user ${(cpu.user / 1000 / N).toFixed(3)}, system ${(cpu.system / 1000 / N).toFixed(3)})`,
        ],
        [
          `overhead ${label}: peak RSS`,
          `${Math.round(process.resourceUsage().maxRSS / 1024)} MB (${Math.round(engineRss / 1024)} MB before the reports)`,
        ],
      ],
      sandbox,
    };
  } catch (error) {
    sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** `reel run` of `bin` on the state `state` in `dir`: ms from start to the submission of `key`, and in all. */
async function rerun(bin, dir, state, sandbox, key) {
  const started = Date.now();
  const child = spawn(process.execPath, [bin, "run", "m.yaml", "--state", state], {
    cwd: dir,
    env: { ...process.env, REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let firstSubmitMs;
  let err = "";
  child.stderr.on("data", (d) => {
    err = err.slice(-200) + d;
    if (firstSubmitMs === undefined && err.includes(`submitted ${key} `))
      firstSubmitMs = Date.now() - started;
  });
  const code = await new Promise((resolve) => child.on("exit", resolve));
  return { firstSubmitMs, code, wholeMs: Date.now() - started };
}

/**
 * One new video added to the jobs done: how long until reel submits it? BENCH_AGAINST=OTHER/bin/reel.js
 * (another build, e.g. main's) reruns a copy of the same state with it and with this build, alternately,
 * BENCH_RESUME_ROUNDS times each (default 3), and prints the medians.
 */
async function resume(fromOverhead) {
  const { dir, sandbox } = fromOverhead;
  try {
    const n = Number(process.env.BENCH_JOBS ?? 10_000);
    const text = manifestOf("overhead", n + 1, () => [5]);
    writeFileSync(join(dir, "m.yaml"), text);
    const title = `resume: ${n.toLocaleString("en-US")}-job state, start -> first submission (process start included)`;
    const against = process.env.BENCH_AGAINST;
    if (against === undefined) {
      const { firstSubmitMs, code, wholeMs } = await rerun(BIN, dir, "state.db", sandbox, `overhead/v${n}`);
      return [
        [title, `${firstSubmitMs} ms (exit ${code})`],
        ["resume: whole rerun", `${wholeMs} ms`],
      ];
    }
    // Alternately, BENCH_RESUME_ROUNDS times each (default 3): the machine's noise falls on both.
    const rounds = Number(process.env.BENCH_RESUME_ROUNDS ?? 3);
    const builds = [
      { label: against, bin: against, first: [], whole: [], codes: new Set() },
      { label: "this build", bin: BIN, first: [], whole: [], codes: new Set() },
    ];
    for (let round = 0; round < rounds; round++) {
      for (const build of builds) {
        const state = "state-rerun.db";
        rmSync(join(dir, `${state}-shm`), { force: true });
        for (const suffix of ["", "-wal"]) {
          rmSync(join(dir, `${state}${suffix}`), { force: true });
          if (existsSync(join(dir, `state.db${suffix}`)))
            copyFileSync(join(dir, `state.db${suffix}`), join(dir, `${state}${suffix}`));
        }
        // Each rerun sends v{n} through the same output folder: its journal (and the video) would tell
        // the next rerun that another state file sent it. Both are put back as they were.
        const journal = join(dir, "out", ".reel-journal.jsonl");
        const saved = existsSync(journal) ? readFileSync(journal) : undefined;
        const { firstSubmitMs, code, wholeMs } = await rerun(
          build.bin,
          dir,
          state,
          sandbox,
          `overhead/v${n}`,
        );
        if (saved !== undefined) writeFileSync(journal, saved);
        const folder = join(dir, "out", "overhead");
        for (const name of existsSync(folder) ? readdirSync(folder) : [])
          if (name.startsWith(`v${n}.`)) rmSync(join(folder, name), { recursive: true, force: true });
        build.first.push(firstSubmitMs);
        build.whole.push(wholeMs);
        build.codes.add(code);
      }
    }
    const rows = builds.map((build) => [
      `${title}, ${build.label}`,
      `median ${median(build.first)} ms of ${rounds} (${build.first.join(", ")}; exit ${[...build.codes].join(", ")}); ` +
        `whole rerun ${median(build.whole)} ms`,
    ]);
    return rows;
  } finally {
    sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function hashing() {
  const dir = mkdtempSync(join(tmpdir(), "reel-bench-"));
  try {
    const files = [];
    for (let i = 0; i < 4; i++) {
      const path = join(dir, `f${i}.bin`);
      const fd = openSync(path, "w");
      // Real bytes, not a sparse file: the disk and page cache are part of the cost.
      const block = Buffer.alloc(1 << 20, i + 1);
      for (let m = 0; m < 256; m++) writeSync(fd, block);
      closeSync(fd);
      // Files made an hour ago: reel does not cache the hash of a file written moments before
      // (src/engine/cached-file-hash.ts, RACY_MS).
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(path, hourAgo, hourAgo);
      files.push(path);
    }
    let t = Date.now();
    execFileSync("sha256sum", files);
    const coreutils = Date.now() - t;
    const store = StateStore.open(join(dir, "state.db"), { baseUrl: "bench" });
    const hasher = makeCachedHasher(store);
    // Each file opened as a run opens it (the hasher reads the descriptor it is given).
    const hashAll = async (hash) => {
      for (const f of files) {
        const handle = await openNoFollow(f);
        try {
          await hash(f, { handle, stamp: stampOf(await handle.stat({ bigint: true })) });
        } finally {
          await handle.close();
        }
      }
    };
    t = Date.now();
    await hashAll(hasher);
    const first = Date.now() - t;
    const again = makeCachedHasher(store);
    t = Date.now();
    await hashAll(again);
    const second = Date.now() - t;
    await store.close();
    return [
      ["hashing 1 GiB: sha256sum", `${coreutils} ms`],
      ["hashing 1 GiB: reel, first run", `${first} ms (ratio ${(first / coreutils).toFixed(2)})`],
      [
        "hashing 1 GiB: reel, second run (unchanged files)",
        `${second} ms, files rehashed: ${again.stats.hashed}`,
      ],
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Several sizes (BENCH_JOBS=5000,40000): this bench's overhead and resume once per size, in a process of its own. */
function eachSize(sizes) {
  const rows = [];
  for (const size of sizes) {
    const shm = existsSync("/dev/shm") ? { TMPDIR: "/dev/shm" } : {};
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "overhead"], {
      env: { ...process.env, ...shm, BENCH_JOBS: String(size), BENCH_FLOOR: "0" },
      encoding: "utf8",
      maxBuffer: 1 << 20,
    });
    for (const line of out.trim().split("\n")) {
      const [, name, value] = /^(.*?)\s{2,}(\S.*)$/.exec(line) ?? [];
      if (name) rows.push([`${size.toLocaleString("en-US")} jobs: ${name}`, value]);
    }
  }
  return rows;
}

/**
 * The cost of --metrics: reel's CPU per job over BENCH_METRICS_JOBS instant jobs (default 3,000, on
 * tmpfs), with the metrics on (the engine's events, the client's answers, the store's calls timed,
 * scraped every second) and off, alternately, 5 runs each: the medians side by side.
 */
async function metricsCost() {
  const N = Number(process.env.BENCH_METRICS_JOBS ?? 3_000);
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const sandbox = await childSandbox(["--slots", "1000", "--time-scale", "0"]);
  const once = async (withMetrics) => {
    const dir = mkdtempSync(join(base, "reel-bench-"));
    try {
      writeFileSync(
        join(dir, "m.yaml"),
        manifestOf("metrics", N, () => [5]),
      );
      const cpu0 = process.cpuUsage();
      const jobs = await loadJobs(dir, "m.yaml");
      const metrics = withMetrics ? benchMetrics(sandbox) : undefined;
      const opened = StateStore.open(join(dir, "state.db"), { baseUrl: sandbox.baseUrl });
      const store = metrics ? timedStore(opened, metrics.observeStoreCall) : opened;
      const client = clientOf(sandbox, metrics);
      const scraper = metrics && setInterval(() => void metrics.registry.metrics(), 1_000);
      const summary = await runOnSandbox(sandbox, dir, {
        jobs,
        client,
        store,
        concurrency: 64,
        downloadConcurrency: 16,
        ...(metrics ? { progress: metrics.progress } : {}),
      });
      if (scraper) clearInterval(scraper);
      if (metrics) await metrics.registry.metrics();
      const cpu = process.cpuUsage(cpu0);
      const ok = N - summary.notDone.length;
      if (ok !== N) throw new Error(`only ${ok}/${N} jobs done`);
      await opened.close();
      await client.close();
      return (cpu.user + cpu.system) / 1000 / N;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const off = [];
  const on = [];
  try {
    await once(false); // warm-up: the first run pays for loading and JIT
    for (let i = 0; i < 5; i++) {
      off.push(await once(false));
      on.push(await once(true));
    }
  } finally {
    sandbox.close();
  }
  const [a, b] = [median(off), median(on)];
  return [
    [
      `metrics: CPU per job, off (median of 5, ${N} jobs)`,
      `${a.toFixed(3)} ms (${off.map((v) => v.toFixed(3)).join(", ")})`,
    ],
    [
      `metrics: CPU per job, on (median of 5, alternating)`,
      `${b.toFixed(3)} ms (${on.map((v) => v.toFixed(3)).join(", ")})`,
    ],
    ["metrics: cost of --metrics per job", `${(((b - a) / a) * 100).toFixed(1)}%`],
  ];
}

const wanted = process.argv.slice(2);
const want = (name) => wanted.length === 0 || wanted.includes(name);
// A list (a comma in it, "40000," for one size): one process per size, on tmpfs if there is one.
const sizes = (process.env.BENCH_JOBS ?? "10000").split(",").filter(Boolean).map(Number);
const bySize = (process.env.BENCH_JOBS ?? "").includes(",");
const rows = [];
if (want("makespan")) rows.push(...(await makespan()));
if ((want("overhead") || want("resume")) && bySize) rows.push(...eachSize(sizes));
else if (want("overhead") || want("resume")) {
  const o = await overhead(tmpdir(), `(output in ${tmpdir()})`);
  rows.push(...o.rows);
  rows.push(...(await resume(o)));
  if (existsSync("/dev/shm") && tmpdir() !== "/dev/shm") {
    const t = await overhead("/dev/shm", "(output on tmpfs)");
    rows.push(...t.rows.filter(([name]) => !name.includes("RSS"))); // maxRSS is the process's peak so far
    t.sandbox.close();
    rmSync(t.dir, { recursive: true, force: true });
  }
  if (process.env.BENCH_FLOOR !== "0")
    rows.push(...(await floor(existsSync("/dev/shm") ? "/dev/shm" : tmpdir())));
}
if (want("hashing")) rows.push(...(await hashing()));
if (wanted.includes("metrics")) rows.push(...(await metricsCost()));
const width = Math.max(...rows.map((r) => r[0].length));
for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
