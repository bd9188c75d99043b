// Fleet benchmarks: `reel run` processes sharing one PostgreSQL store. Prints figures;
// asserts nothing (the machine is shared and noisy).
//   node bench/fleet-bench.js [scaling|shared|overhead|ceiling|start|warmup]...   (after `npm run build`; Linux:
//   the CPU figures are read from /proc)
// `shared` adds to the scaling rounds one where every runner is given every manifest; `start` (only
// when named) measures a runner's start and stop alone, ten times over (see startRounds); `warmup`
// (only when named) what a runner costs once apart from what each job costs (see warmupRounds).
// The server: REEL_TEST_PG_URL (a role allowed to create databases), else the tests' role made by
// scripts/postgres-for-tests.sh. Each round makes its own database (reel_bench_<random>_<n>) and
// every one is dropped at the end. Without a reachable server the PostgreSQL parts are skipped with
// one line. BENCH_FLEET_JOBS sets the overhead run's job count (default 2,000), BENCH_FLEET_ROUNDS
// how many times its SQLite and PostgreSQL rounds alternate (default 1). BENCH_FLEET_BASELINE, the
// bin/reel.js of another build (say the main branch's, built), runs each scaling round with it too,
// just before this build's, its lines marked "(baseline)": before and after side by side in one run.
// BENCH_FLEET_OBSERVE=1 runs each scaling round again just after, every runner with --events FILE,
// --notify (a receiver in this process) and --metrics 0 (scraped every second, as Prometheus
// would), its lines marked "(observed)": what following a fleet costs, side by side in one run
// (with BENCH_FLEET_BASELINE, the baseline's observed too).
// BENCH_FLEET_NODE_OPTIONS, node's flags (V8's too, which NODE_OPTIONS refuses) for this build's
// runners only, say "--max-opt=1": with BENCH_FLEET_BASELINE, a flag's cost side by side in one run.
// BENCH_FLEET_RUNNERS, say "1,4": only the PostgreSQL scaling rounds of those runner counts.
// BENCH_FLEET_BACKENDS=1 adds each round's PostgreSQL CPU backend by backend.
// BENCH_FLEET_NAMED=1 makes every round's runners spend from one named budget (`reel budget set
// bench --max-seconds` far above the work, set before the round; `--budget bench` on each runner):
// what a claim charged to a named budget costs.
// BENCH_FLEET_REPEAT=N runs the scaling rounds N times in turn (1, 2, 4 runners, 1, 2, 4, ...): the
// 4-runners / 1-runner ratios then come from the rounds of median CPU, steadier on a noisy machine.
// BENCH_FLEET_SCALE_JOBS (default 400, a multiple of 8) sets the scaling rounds' jobs: with more,
// each runner's start weighs less in its CPU per job. BENCH_FLEET_SLOTS (default 16) sets the
// sandbox's slots, the bound and each runner's --concurrency.
// Each PostgreSQL round's store is a copy of one migrated before the rounds (a fleet joins a store
// that exists; the first start on an empty one migrates it, timed on a line of its own);
// BENCH_FLEET_NEW_STORE=1 gives each round an empty store instead, its first runner migrating it.
//
// How the CPU is counted: a runner is a child process, so its CPU (user + system) is read from this
// process's cutime/cstime in /proc/self/stat once it has exited; the sandbox runs in this process
// and is not counted. PostgreSQL's share is the CPU of the server processes serving the round's
// database (backends, found by their title in /proc and sampled every 100 ms); the server's own
// background processes (WAL writer, checkpointer), shared with whatever else uses the server, are
// left out.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startSandbox } from "../dist/sandbox/index.js";
import { PgStore } from "../dist/state/pg/store.js";
import { manifestOf as manifestText } from "./batch-on-sandbox.js";

const BIN = fileURLToPath(new URL("../bin/reel.js", import.meta.url));
const BASELINE = process.env.BENCH_FLEET_BASELINE;
const SELF = fileURLToPath(import.meta.url);
const NAMED = process.env.BENCH_FLEET_NAMED === "1";
const NODE_FLAGS = (process.env.BENCH_FLEET_NODE_OPTIONS ?? "").split(/\s+/).filter(Boolean);
const ONLY_RUNNERS = process.env.BENCH_FLEET_RUNNERS?.split(",").map(Number);
/** node's flags for a runner of `bin`: BENCH_FLEET_NODE_OPTIONS for this build's, none for another's. */
const nodeFlags = (bin) => (bin === BIN ? NODE_FLAGS : []);
const ADMIN_URL = process.env.REEL_TEST_PG_URL ?? "postgres://reel_test:reel_test@127.0.0.1:5432/postgres";
const CLOCK_TICKS = 100; // USER_HZ: /proc's CPU times are in hundredths of a second
const RUN_TAG = randomBytes(4).toString("hex");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- PostgreSQL: the bench's own databases ----

async function adminQuery(sql, params = [], url = ADMIN_URL) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end().catch(() => {});
  }
}

const databases = [];

/**
 * A fresh database for one round: its name and URL. With `template`, a copy of that database (a
 * store already migrated, as a fleet's runners find it), else empty (its first runner migrates it).
 */
async function newDatabase(template) {
  const name = `reel_bench_${RUN_TAG}_${databases.length}`;
  await adminQuery(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  databases.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

const templates = new Map(); // bin -> { name, newMs, migratedMs }

/**
 * The store a round of `bin`'s runners joins: a team's store exists before its runners start, and
 * is migrated once in its life, so each round gets a copy of a database `bin`'s reel has migrated
 * (its own schema: a baseline of another version migrates its own). BENCH_FLEET_NEW_STORE=1: an
 * empty database instead, migrated by the round's first runner while the others wait.
 */
async function storeFor(bin) {
  if (process.env.BENCH_FLEET_NEW_STORE === "1") return newDatabase();
  if (!templates.has(bin)) {
    const db = await newDatabase();
    // `reel budget show` opens the store, migrating an empty one; timed on the empty and the migrated.
    const newMs = await reelCommand(bin, ["budget", "show"], db.url);
    const migratedMs = await reelCommand(bin, ["budget", "show"], db.url);
    templates.set(bin, { name: db.name, newMs, migratedMs });
  }
  return newDatabase(templates.get(bin).name);
}

/** `reel ARGS` (of `bin`) on the store at `url`: its wall time in ms; throws unless it exits 0. */
async function reelCommand(bin, args, url) {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], {
    env: runnerEnv({ REEL_STORE: url }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`reel ${args.join(" ")} exited with ${code}: ${stderr}`);
  return performance.now() - started;
}

async function dropDatabases() {
  for (const name of databases.splice(0)) {
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((error) =>
      console.log(`(could not drop the bench database ${name}: ${error.message})`),
    );
  }
}

/** Scans of the events table in database `db`: the runners' read-backs of their events, mostly. */
async function eventReads(db) {
  const { rows } = await adminQuery(
    "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'events'",
    [],
    db.url,
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Updates of the runners' rows in database `db`: one per claim tried (its fence, bound full or not),
 * plus each heartbeat and each task taken to follow.
 */
async function runnerRowUpdates(db) {
  const { rows } = await adminQuery(
    "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'runners'",
    [],
    db.url,
  );
  return Number(rows[0]?.n_tup_upd ?? 0);
}

/**
 * Transactions committed or rolled back so far (the statistics collector's): in database `db`, and
 * in each of the server's other databases (whatever else uses the server: they share its WAL and its
 * CPU, so their commits slow this bench's).
 */
async function transactions(db) {
  const { rows } = await adminQuery(
    "SELECT datname, xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname IS NOT NULL",
  );
  const others = new Map(rows.filter((r) => r.datname !== db.name).map((r) => [r.datname, Number(r.n)]));
  return { mine: Number(rows.find((r) => r.datname === db.name)?.n ?? 0), others };
}

/** Transactions of other databases between two readings, of those that lived through both. */
function othersBetween(before, after) {
  let n = 0;
  for (const [name, count] of after.others) if (before.others.has(name)) n += count - before.others.get(name);
  return n;
}

// ---- CPU from /proc ----

/** utime + stime of a process, in seconds; undefined if it is gone. */
function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** CPU seconds of this process's children that have exited (cutime + cstime). */
function childrenCpu() {
  const { user, system } = childrenCpuParts();
  return user + system;
}

/** The same, user and system apart. */
function childrenCpuParts() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return { user: Number(fields[13]) / CLOCK_TICKS, system: Number(fields[14]) / CLOCK_TICKS };
}

/**
 * The CPU of the PostgreSQL backends serving database `name` (their title: "postgres: 15/main: user
 * name host(port) state"): each one's last reading, sampled every 100 ms so that backends that end
 * before the round does are counted (all but their last 100 ms).
 */
function backendCpu(name) {
  const needle = ` ${name} `;
  const last = new Map();
  const notPostgres = new Set();
  const scan = () => {
    for (const entry of readdirSync("/proc")) {
      if (notPostgres.has(entry) || !/^\d+$/.test(entry)) continue;
      if (!last.has(entry)) {
        let title;
        try {
          title = readFileSync(`/proc/${entry}/cmdline`, "latin1");
        } catch {
          continue;
        }
        // A backend just forked still has the server's command line: looked at again next time.
        if (!title.includes("postgres")) notPostgres.add(entry);
        if (!title.startsWith("postgres: ") || !title.includes(needle)) continue;
      }
      const cpu = cpuOf(entry);
      if (cpu !== undefined) last.set(entry, cpu);
    }
  };
  scan();
  const timer = setInterval(scan, 100);
  return {
    /** Stops sampling; the CPU seconds counted, and how many backends. */
    stop() {
      scan();
      clearInterval(timer);
      const each = [...last.values()].sort((a, b) => b - a);
      return { seconds: each.reduce((a, b) => a + b, 0), backends: last.size, each };
    },
  };
}

/**
 * The whole machine's CPU (/proc/stat), sampled every 50 ms: `busyBetween(t0, t1)` is the share of
 * all cores busy between two Date.now() times (the samples nearest inside them).
 */
function machineCpu() {
  const samples = [];
  const sample = () => {
    const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/);
    const ticks = fields.map(Number);
    const idle = ticks[3] + ticks[4]; // idle + iowait
    samples.push({ at: Date.now(), idle, total: ticks.reduce((a, b) => a + b, 0) });
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    stop() {
      clearInterval(timer);
      sample();
    },
    busyBetween(t0, t1) {
      const inside = samples.filter((x) => x.at >= t0 && x.at <= t1);
      if (inside.length < 2) return Number.NaN;
      const a = inside[0];
      const b = inside[inside.length - 1];
      return 1 - (b.idle - a.idle) / (b.total - a.total);
    },
  };
}

/**
 * The CPU of the runners' threads, sampled every 100 ms while they live: the main thread's (the
 * JavaScript, its system calls) apart from the others' (V8's compiler and GC helpers, libuv's pool).
 * The last moments of each process are missed: shares, beside the exact total from /proc/self/stat.
 */
function threadCpu(intervalMs = 100) {
  const pids = new Set();
  const last = new Map(); // "pid/tid" -> { main, seconds }
  const scan = () => {
    for (const pid of pids) {
      let tids;
      try {
        tids = readdirSync(`/proc/${pid}/task`);
      } catch {
        continue;
      }
      for (const tid of tids) {
        const seconds = cpuOf(`${pid}/task/${tid}`);
        if (seconds !== undefined) last.set(`${pid}/${tid}`, { main: tid === String(pid), seconds });
      }
    }
  };
  const timer = setInterval(scan, intervalMs);
  return {
    add: (pid) => pid !== undefined && pids.add(pid),
    /** Stops sampling: the CPU seconds counted of the main threads and of the others. */
    totals() {
      clearInterval(timer);
      let main = 0;
      let others = 0;
      for (const t of last.values()) {
        if (t.main) main += t.seconds;
        else others += t.seconds;
      }
      return { main, others };
    },
    /** Stops sampling: the share of the main threads in the CPU counted. */
    stop() {
      clearInterval(timer);
      let main = 0;
      let all = 0;
      for (const t of last.values()) {
        all += t.seconds;
        if (t.main) main += t.seconds;
      }
      return all > 0 ? main / all : Number.NaN;
    },
  };
}

// ---- Manifests and runners ----

const manifestOf = (name, count, durationsOf) =>
  manifestText(name, count, durationsOf, (i, c) => `${name} take ${i} part ${c}`);

/** The environment of a runner: this one's, without any REEL_* setting of the person running the bench. */
function runnerEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("REEL_")));
  return { ...env, ...extra };
}

/**
 * One `reel run` process (of `bin`); resolves with its exit code and the end of its stderr. With
 * `scrape`, its --metrics endpoint is scraped every second, as Prometheus would, until it closes.
 */
function runReel(cwd, args, env, bin = BIN, scrape = false, onSpawn = () => {}) {
  mkdirSync(cwd, { recursive: true });
  const child = spawn(process.execPath, [...nodeFlags(bin), bin, "run", ...args], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  onSpawn(child.pid);
  let stderr = "";
  let scraper;
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-2_000);
    const url = scrape && !scraper && /metrics at (http:\/\/\S+\/metrics)/.exec(stderr)?.[1];
    if (url)
      scraper = setInterval(
        () =>
          void globalThis.fetch(url).then(
            (r) => r.text(),
            () => {},
          ),
        1_000,
      );
  });
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearInterval(scraper);
      resolve({ code, signal, stderr });
    }),
  );
}

/** A --notify receiver: answers 200 to every post, and counts them. */
async function startReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200).end("ok");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** `reel budget set bench` (of `bin`) on the round's store, with a cap no round reaches. */
async function setNamedBudget(dir, db, env, bin = BIN) {
  const args = [bin, "budget", "set", "bench", "--max-seconds", "100000000"];
  if (!db) args.push("--state", join(dir, "state.db"));
  const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`reel budget set exited with ${code}: ${stderr}`);
}

/** Videos in an output folder (`<out>/<manifest>/*.mp4`). */
function videosIn(out) {
  if (!existsSync(out)) return 0;
  let n = 0;
  for (const dir of readdirSync(out, { withFileTypes: true })) {
    if (dir.isDirectory() && !dir.name.startsWith("."))
      n += readdirSync(join(out, dir.name)).filter((f) => f.endsWith(".mp4")).length;
  }
  return n;
}

/**
 * One round: `runners` processes of `reel run` on one sandbox and one store (a fresh PostgreSQL
 * database, or a state file with `db` undefined), all writing into one output folder. `split`: each
 * runner gets its share of the manifests (runner r: m_r, m_{r+R}, ...); otherwise each gets them all.
 */
async function round({ db, runners, split, manifests, sandbox, dir, concurrency, out, bin, hook }) {
  const names = manifests.map((m) => join(dir, `${m}.yaml`));
  const env = runnerEnv({
    REEL_BASE_URL: sandbox.baseUrl,
    REEL_API_KEY: sandbox.apiKey,
    ...(db ? { REEL_STORE: db.url } : {}),
  });
  if (NAMED) await setNamedBudget(dir, db, env, bin);
  const xacts0 = db ? await transactions(db) : undefined;
  const pgCpu = db && backendCpu(db.name);
  const threads = threadCpu();
  const cpu0 = childrenCpuParts();
  const machine = machineCpu();
  const started = performance.now();
  const spawnedAt = Date.now();
  const results = await Promise.all(
    Array.from({ length: runners }, (_, r) => {
      const mine = split ? names.filter((_, i) => i % runners === r) : names;
      const args = [...mine, "--concurrency", String(concurrency), "--out", out];
      if (!db) args.push("--state", join(dir, "state.db"));
      if (hook) args.push("--events", "events.jsonl", "--notify", hook.url, "--metrics", "0");
      if (NAMED) args.push("--budget", "bench");
      // Each runner in a folder of its own (its logs and hash cache), as on its own machine.
      return runReel(join(dir, `runner${r}`), args, env, bin, hook !== undefined, threads.add);
    }),
  );
  const wallMs = performance.now() - started;
  const exitedAt = Date.now();
  machine.stop();
  const cpu1 = childrenCpuParts();
  const runnerUser = cpu1.user - cpu0.user;
  const runnerSystem = cpu1.system - cpu0.system;
  const runnerCpu = runnerUser + runnerSystem;
  const server = pgCpu?.stop();
  const mainShare = threads.stop();
  for (const [r, result] of results.entries()) {
    if (result.code !== 0)
      console.log(`(runner ${r} exited with ${result.code ?? result.signal}: ${result.stderr.slice(-400)})`);
  }
  // The statistics of the runners' backends are flushed when they end; read a moment later.
  let xacts;
  let othersPerSecond;
  if (db) {
    await sleep(600);
    const xacts1 = await transactions(db);
    xacts = xacts1.mine - xacts0.mine;
    othersPerSecond = (othersBetween(xacts0, xacts1) * 1000) / (performance.now() - started);
  }
  const fences = db ? await runnerRowUpdates(db) : undefined;
  const reads = db ? await eventReads(db) : undefined;
  return {
    wallMs,
    spawnedAt,
    exitedAt,
    machine,
    runnerCpu,
    mainShare,
    runnerUser,
    runnerSystem,
    server,
    xacts,
    othersPerSecond,
    fences,
    reads,
    codes: results.map((r) => r.code),
  };
}

/**
 * With the bound full, the k-th task to finish frees the slot that the (k + SLOTS)-th submission
 * takes: the time between them, for every slot freed while work was left.
 */
function refillGaps(tasks) {
  const finishes = tasks
    .map((t) => t.finishedAt)
    .filter((t) => t !== undefined)
    .sort((a, b) => a - b);
  const creations = tasks.map((t) => t.createdAt).sort((a, b) => a - b);
  const gaps = [];
  for (let k = 0; k + SLOTS < creations.length && k < finishes.length; k++)
    gaps.push(Math.max(0, creations[k + SLOTS] - finishes[k]));
  return gaps;
}

function percentile(values, p) {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : Number.NaN;
}

const pct = (share) => `${Math.round(100 * share)}%`;
const fmtS = (ms) => `${(ms / 1000).toFixed(2)} s`;
const perJob = (seconds, n) => `${((seconds * 1000) / n).toFixed(2)} ms`;

// ---- 1. Fleet scaling ----

/** BENCH_FLEET_SCALE_JOBS: more jobs share each runner's start (a multiple of 8; default 400). */
const SCALE_JOBS = Number(process.env.BENCH_FLEET_SCALE_JOBS ?? 400);
/** BENCH_FLEET_REPEAT: each scaling round run this many times, in turn; the ratios from medians. */
const REPEAT = Number(process.env.BENCH_FLEET_REPEAT ?? 1);
const SCALE_MANIFESTS = 8;
const SLOTS = Number(process.env.BENCH_FLEET_SLOTS ?? 16);
const TIME_SCALE = 0.025;
/** One to three chunks of 5 or 10 s: tasks of 125 to 625 ms at TIME_SCALE, the same in every round. */
const scaleDurations = (i) => Array.from({ length: 1 + (i % 3) }, (_, c) => ((i + c) % 2 ? 5 : 10));

async function scaling(pgOk, shared) {
  const perManifest = SCALE_JOBS / SCALE_MANIFESTS;
  let totalRunMs = 0;
  let longestMs = 0;
  for (let i = 0; i < perManifest; i++) {
    const ms = scaleDurations(i).reduce((a, b) => a + b, 0) * TIME_SCALE * 1000;
    totalRunMs += ms * SCALE_MANIFESTS;
    longestMs = Math.max(longestMs, ms);
  }
  const idealMs = Math.max(totalRunMs / SLOTS, longestMs);
  const rounds = ONLY_RUNNERS ? [] : [{ label: "SQLite, 1 runner", runners: 1, pg: false, split: true }];
  if (pgOk) {
    for (const n of ONLY_RUNNERS ?? [1, 2, 4])
      rounds.push({ label: `PostgreSQL, ${n} runner${n > 1 ? "s" : ""}`, runners: n, pg: true, split: true });
  }
  // Every runner given every manifest (they race for each job): `node bench/fleet-bench.js shared`.
  if (pgOk && shared)
    rounds.push({ label: "PostgreSQL, 4 runners, all manifests each", runners: 4, pg: true, split: false });
  const rows = [
    [
      "scaling: the work",
      `${SCALE_JOBS} jobs in ${SCALE_MANIFESTS} manifests, tasks of 125-625 ms, ${SLOTS} slots, bound ${SLOTS} (--concurrency ${SLOTS} each); ideal ${fmtS(idealMs)}; ${process.env.BENCH_FLEET_NEW_STORE === "1" ? "each PostgreSQL round on an empty store" : "each PostgreSQL round on a store migrated before it"}`,
    ],
  ];
  const builds = [{ bin: BIN, tag: "" }];
  if (BASELINE) builds.unshift({ bin: BASELINE, tag: " (baseline)" });
  if (process.env.BENCH_FLEET_OBSERVE === "1") {
    if (BASELINE) builds.push({ bin: BASELINE, tag: " (baseline, observed)", observe: true });
    builds.push({ bin: BIN, tag: " (observed)", observe: true });
  }
  // CPU per job of each build: { sqlite, pg: { runners: { runners, pg } } }.
  const perJobCpu = new Map(builds.map((b) => [b.tag, { pg: new Map() }]));
  for (let turn = 1; turn <= REPEAT; turn++) {
    for (const spec of rounds) {
      for (const build of builds) {
        const label = `${spec.label}${build.tag}${REPEAT > 1 ? ` #${turn}` : ""}`;
        const r = await scalingRound(spec, build.bin, idealMs, label, rows, build.observe);
        const cpu = perJobCpu.get(build.tag);
        if (!spec.pg) (cpu.sqlite ??= []).push(r.runnerCpu / SCALE_JOBS);
        else if (spec.split) {
          const runs = cpu.pg.get(spec.runners) ?? [];
          runs.push({ runners: r.runnerCpu, pg: r.server.seconds });
          cpu.pg.set(spec.runners, runs);
        }
      }
    }
  }
  if (pgOk) {
    for (const build of builds) {
      const made = templates.get(build.bin);
      if (made)
        rows.push([
          `scaling: reel budget show on an empty store (migrating it) / on a migrated one${build.tag}`,
          `${fmtS(made.newMs)} / ${fmtS(made.migratedMs)}`,
        ]);
    }
    for (const build of builds) {
      // A runner's fixed cost: start (load, connect, register, checks), heartbeats, stop; with one job.
      const start = await startCost(build.bin);
      const cpu = perJobCpu.get(build.tag);
      rows.push([
        `scaling: a runner's start and stop, PostgreSQL, one job${build.tag}`,
        `${(start.runner * 1000).toFixed(0)} ms CPU + PostgreSQL ${(start.pg * 1000).toFixed(0)} ms; reel --version ${(start.version * 1000).toFixed(0)} ms`,
      ]);
      const one = medianRun(cpu.pg.get(1));
      const four = medianRun(cpu.pg.get(4));
      if (!one || !four) continue;
      const total = (c, n, apart) =>
        (c.runners + c.pg - (apart ? n * (start.runner + start.pg) : 0)) / SCALE_JOBS;
      rows.push([
        `scaling: CPU per job, runners + PostgreSQL, 4 runners / 1 runner${build.tag}`,
        `${(total(four, 4, false) / total(one, 1, false)).toFixed(2)}x (${perJob(total(four, 4, false), 1)} / ${perJob(total(one, 1, false), 1)}); without each runner's start and stop: ${(total(four, 4, true) / total(one, 1, true)).toFixed(2)}x (${perJob(total(four, 4, true), 1)} / ${perJob(total(one, 1, true), 1)})`,
      ]);
      if (cpu.sqlite)
        rows.push([
          `scaling: a runner's CPU per job, PostgreSQL (1 runner) / SQLite${build.tag}`,
          `${(one.runners / SCALE_JOBS / percentile(cpu.sqlite, 0.5)).toFixed(2)}x`,
        ]);
    }
  }
  return rows;
}

/** Of a round's runs ({ runners, pg } CPU seconds), the one of median total; undefined for none. */
function medianRun(runs) {
  if (!runs?.length) return undefined;
  const sorted = [...runs].sort((a, b) => a.runners + a.pg - (b.runners + b.pg));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** One scaling round of `spec` with the reel of `bin`; its lines appended to `rows`. */
async function scalingRound(spec, bin, idealMs, label, rows, observe = false) {
  const perManifest = SCALE_JOBS / SCALE_MANIFESTS;
  const sandbox = await startSandbox({ slots: SLOTS, timeScale: TIME_SCALE, preProcessingMs: 0 });
  const dir = mkdtempSync(join(tmpdir(), "reel-fleet-bench-"));
  const hook = observe ? await startReceiver() : undefined;
  try {
    const manifests = Array.from({ length: SCALE_MANIFESTS }, (_, m) => `m${m}`);
    for (const m of manifests)
      writeFileSync(join(dir, `${m}.yaml`), manifestOf(m, perManifest, scaleDurations));
    const db = spec.pg ? await storeFor(bin) : undefined;
    const out = join(dir, "out");
    const r = await round({ ...spec, db, manifests, sandbox, dir, concurrency: SLOTS, out, bin, hook });
    const tasks = [...sandbox.counters.tasks.values()];
    const first = Math.min(...tasks.map((t) => t.createdAt));
    const last = Math.max(...tasks.map((t) => t.finishedAt ?? 0));
    const busy = tasks.reduce((a, t) => a + ((t.finishedAt ?? 0) - (t.startedAt ?? t.finishedAt ?? 0)), 0);
    const c = sandbox.counters;
    const fetchLag = tasks.map((t) => (t.firstDownloadAt ?? Number.NaN) - (t.finishedAt ?? Number.NaN));
    const noticeLag = tasks.map((t) => (t.seenFinalAt ?? Number.NaN) - (t.finishedAt ?? Number.NaN));
    const refill = refillGaps(tasks);
    rows.push(
      [
        `scaling ${label}: makespan (spawn -> all exited) / ideal`,
        `${fmtS(r.wallMs)} = ${(r.wallMs / idealMs).toFixed(2)}x; first submission -> last task done ${fmtS(last - first)}, slots busy ${((100 * busy) / (SLOTS * (last - first))).toFixed(0)}% of it`,
      ],
      [
        // The makespan's two ends, beside the slots' work: the runners' starts and their last records and reports.
        `scaling ${label}: spawn -> first submission; last task done -> all exited (the machine's cores busy)`,
        `${fmtS(first - r.spawnedAt)} (${pct(r.machine.busyBetween(r.spawnedAt, first))}); ${fmtS(r.exitedAt - last)}; first submission -> last task done: ${pct(r.machine.busyBetween(first, last))} busy`,
      ],
      [
        // Each a turn of some runner's event loop, and a request the service answers.
        `scaling ${label}: requests to the service per job (polls of a task)`,
        `${([...c.requests.values()].reduce((a, b) => a + b, 0) / SCALE_JOBS).toFixed(1)} (${(c.requestCount("GET", "/v1/generations/:id") / SCALE_JOBS).toFixed(1)})`,
      ],
      [
        `scaling ${label}: tasks / duplicates / peak unfinished / videos`,
        `${c.generationsCreated} / ${c.duplicateGenerations()} / ${c.peakUnfinished} / ${videosIn(out)}`,
      ],
      [
        // A task done on the service holds its place in the bound until its runner records it.
        `scaling ${label}: task done -> its download starts, median / 90th percentile`,
        `${percentile(fetchLag, 0.5)} / ${percentile(fetchLag, 0.9)} ms`,
      ],
      [
        // Where a slot's idle time goes: the poll's notice, then the download, the record and the next claim.
        `scaling ${label}: task done -> seen by a poll / its slot's next submission, median / 90th`,
        `${percentile(noticeLag, 0.5)} / ${percentile(noticeLag, 0.9)} ms; ${percentile(refill, 0.5)} / ${percentile(refill, 0.9)} ms`,
      ],
      [
        `scaling ${label}: CPU per job, runners${spec.pg ? " + PostgreSQL" : ""}`,
        `${perJob(r.runnerCpu, SCALE_JOBS)}${r.server ? ` + ${perJob(r.server.seconds, SCALE_JOBS)} (${r.server.backends} backends, ${(r.xacts / SCALE_JOBS).toFixed(1)} transactions per job; other databases ${Math.round(r.othersPerSecond)}/s)` : ""}`,
      ],
      [
        // A runner that warms up on fewer jobs spends more of it on the main thread (benchmarks.md).
        `scaling ${label}: runners' CPU per job, user / system; main threads' share`,
        `${perJob(r.runnerUser, SCALE_JOBS)} / ${perJob(r.runnerSystem, SCALE_JOBS)}; ${Math.round(100 * r.mainShare)}%`,
      ],
    );
    if (r.server && process.env.BENCH_FLEET_BACKENDS === "1")
      rows.push([
        `scaling ${label}: PostgreSQL CPU of each backend`,
        r.server.each.map((s) => `${Math.round(s * 1000)}`).join(" ") + " ms",
      ]);
    if (r.fences !== undefined) {
      rows.push([
        `scaling ${label}: claims tried per job (runner-row updates)`,
        (r.fences / SCALE_JOBS).toFixed(1),
      ]);
      rows.push([`scaling ${label}: scans of the events table per job`, (r.reads / SCALE_JOBS).toFixed(2)]);
    }
    if (hook) {
      const lines = manifests.reduce((n, _, i) => {
        const file = join(dir, `runner${i}`, "events.jsonl");
        return n + (existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0);
      }, 0);
      rows.push([`scaling ${label}: events written / messages received`, `${lines} / ${hook.received()}`]);
    }
    return r;
  } finally {
    await hook?.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

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
async function startCost(bin) {
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
async function startRounds() {
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
async function warmupRounds() {
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

// ---- 2. One runner's overhead ----

/** Bytes of the store: the database's tables with their indexes, or the state file with its WAL. */
async function storeBytes(db, dir) {
  if (db) {
    const { rows } = await adminQuery(
      "SELECT sum(pg_total_relation_size(oid)) AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace",
      [],
      db.url,
    );
    return Number(rows[0].n);
  }
  const file = join(dir, "state.db");
  return [file, `${file}-wal`].reduce((a, f) => a + (existsSync(f) ? statSync(f).size : 0), 0);
}

/**
 * One runner, `n` instant tasks, 64 at a time: its CPU per job on each store, PostgreSQL's own CPU
 * beside. 2,000 jobs by default: a runner on PostgreSQL does about 60 jobs a second here (each
 * statement waits its turn on the runner's one connection), so 10,000 would take three minutes.
 */
async function overhead(pgOk) {
  const n = Number(process.env.BENCH_FLEET_JOBS ?? 2_000);
  const rounds = Number(process.env.BENCH_FLEET_ROUNDS ?? 1);
  // Alternated, so that whatever else loads the machine weighs on both alike.
  const plan = Array.from({ length: rounds }, () => (pgOk ? [false, true] : [false])).flat();
  const rows = [];
  const figures = { sqlite: [], pg: [] };
  for (const usePg of plan) {
    const sandbox = await startSandbox({ slots: 1_000, timeScale: 0, preProcessingMs: 0 });
    const dir = mkdtempSync(join(tmpdir(), "reel-fleet-bench-"));
    // The videos on tmpfs where there is one (the disk's cost of new files is no part of the store's);
    // the state file on the disk, like the database.
    const outBase = existsSync("/dev/shm") ? mkdtempSync(join("/dev/shm", "reel-fleet-bench-")) : dir;
    try {
      writeFileSync(
        join(dir, "big.yaml"),
        manifestOf("big", n, () => [5]),
      );
      const db = usePg ? await newDatabase() : undefined;
      const out = join(outBase, "out");
      const r = await round({
        db,
        runners: 1,
        split: true,
        manifests: ["big"],
        sandbox,
        dir,
        concurrency: 64,
        out,
      });
      (usePg ? figures.pg : figures.sqlite).push(r.runnerCpu);
      const name = usePg ? "PostgreSQL" : "SQLite";
      rows.push(
        [
          `overhead ${name}: ${videosIn(out)}/${n} jobs in ${fmtS(r.wallMs)}; CPU per job, runner${usePg ? " + PostgreSQL" : ""}`,
          `${perJob(r.runnerCpu, n)} (user ${perJob(r.runnerUser, n)}, system ${perJob(r.runnerSystem, n)})${r.server ? ` + ${perJob(r.server.seconds, n)} (${(r.xacts / n).toFixed(1)} transactions per job; other databases ${Math.round(r.othersPerSecond)}/s)` : ""}`,
        ],
        [
          `overhead ${name}: the store's size per job`,
          `${Math.round((await storeBytes(db, dir)) / n)} bytes`,
        ],
      );
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
      if (outBase !== dir) rmSync(outBase, { recursive: true, force: true });
    }
  }
  if (figures.pg.length > 0) {
    const best = (list) => Math.min(...list);
    rows.push([
      `overhead: runner CPU, PostgreSQL / SQLite${rounds > 1 ? " (best of each)" : ""}`,
      `${(best(figures.pg) / best(figures.sqlite)).toFixed(2)}x`,
    ]);
  }
  return rows;
}

// ---- 3. The store's ceiling ----

const CEILING_MS = 5_000;
const CEILING_JOBS = 2_500; // per writer: more than one does in CEILING_MS here

/**
 * A writer of the ceiling (a child process): opens a PgStore as a runner does, inserts its jobs,
 * then on "go" runs the store's side of a job's life as fast as it can until the deadline: read the
 * row, claim it (markSubmitting: the account's row locked, the fence, the bound counted), record the
 * answer (markSubmitted), the final status (recordTaskStatus Success) and the download
 * (markDownloaded). Reports its counts, and the time its claims took.
 */
async function ceilingWorker([url, baseUrl, index]) {
  const store = await PgStore.open(url, { baseUrl, concurrency: 10_000 });
  const jobs = Array.from({ length: CEILING_JOBS }, (_, i) => ({
    key: `w${index}/v${i}`,
    manifest: `w${index}`,
    videoId: `v${i}`,
    specHash: randomBytes(32).toString("hex"),
    specJson: JSON.stringify({ model: "actor-2", chunks: [{ duration: 5, text: `w${index} v${i}` }] }),
    seconds: 5,
    model: "actor-2",
  }));
  const heads = await store.upsertJobs(jobs);
  process.send({ ready: true });
  const { deadline } = await new Promise((resolve) => process.once("message", resolve));
  const video = { size: 1_000, sha256: "0".repeat(64), stamp: "bench" };
  let lifecycles = 0;
  let full = 0;
  let claimMs = 0;
  for (const head of heads) {
    if (Date.now() >= deadline) break;
    const row = await store.findJobById(head.id);
    const t = performance.now();
    const claim = await store.markSubmitting(head.id);
    claimMs += performance.now() - t;
    if (claim === "full") {
      full++;
      continue;
    }
    await store.markSubmitted(head.id, `t${index}-${head.id}`);
    await store.recordTaskStatus(head.id, "Success", `https://files.bench.invalid/${head.id}.mp4`, undefined);
    await store.markDownloaded(row, `v${head.id}.mp4`, "/out", video);
    lifecycles++;
  }
  await store.close();
  process.send({ lifecycles, full, claimMs, exhausted: lifecycles === heads.length });
}

/** `writers` writer processes on one fresh database, spread over `accounts` services. */
async function ceilingRound(writers, accounts) {
  const db = await newDatabase();
  const workers = Array.from({ length: writers }, (_, i) => {
    const baseUrl = `http://account-${i % accounts}.bench.invalid`;
    const child = spawn(process.execPath, [SELF, "--ceiling-worker", db.url, baseUrl, String(i)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const inbox = [];
    const waiting = [];
    child.on("message", (m) => (waiting.length ? waiting.shift()(m) : inbox.push(m)));
    const next = () => (inbox.length ? Promise.resolve(inbox.shift()) : new Promise((r) => waiting.push(r)));
    const exited = new Promise((resolve) => child.on("close", resolve));
    return { child, next, exited };
  });
  await Promise.all(workers.map((w) => w.next()));
  const xacts0 = await transactions(db);
  const pgCpu = backendCpu(db.name);
  const cpu0 = childrenCpu();
  const started = Date.now();
  for (const w of workers) w.child.send({ deadline: started + CEILING_MS });
  const counts = await Promise.all(workers.map((w) => w.next()));
  const seconds = (Date.now() - started) / 1000;
  const server = pgCpu.stop();
  await Promise.all(workers.map((w) => w.exited));
  const clientCpu = childrenCpu() - cpu0;
  await sleep(600);
  const xacts1 = await transactions(db);
  const xacts = xacts1.mine - xacts0.mine;
  const others = othersBetween(xacts0, xacts1) / seconds;
  const sum = (k) => counts.reduce((a, c) => a + c[k], 0);
  const lifecycles = sum("lifecycles");
  const claims = lifecycles + sum("full");
  const perSecond = lifecycles / seconds;
  const label = `ceiling, ${writers} writer${writers > 1 ? "s" : ""} on ${accounts === 1 ? "one account" : `${accounts} accounts`}`;
  const notes = [
    sum("full") ? `${sum("full")} claims found the bound full` : "",
    counts.some((c) => c.exhausted) ? "a writer ran out of jobs: raise CEILING_JOBS" : "",
  ].filter(Boolean);
  return [
    [
      `${label}: job lifecycles per second (per day)`,
      `${Math.round(perSecond)} (${((perSecond * 86_400) / 1e6).toFixed(1)} million)${notes.length ? `; ${notes.join("; ")}` : ""}`,
    ],
    [
      `${label}: store calls / transactions per second; mean claim`,
      `${Math.round((lifecycles * 5 + sum("full") * 2) / seconds)} / ${Math.round(xacts / seconds)}; ${(sum("claimMs") / claims).toFixed(1)} ms (other databases ${Math.round(others)} transactions/s)`,
    ],
    [
      `${label}: CPU, PostgreSQL / the writers`,
      `${(server.seconds / seconds).toFixed(2)} / ${(clientCpu / seconds).toFixed(2)} cores; PostgreSQL ${((server.seconds * 1000) / lifecycles).toFixed(2)} ms per lifecycle`,
    ],
  ];
}

async function ceiling() {
  return [...(await ceilingRound(1, 1)), ...(await ceilingRound(8, 1)), ...(await ceilingRound(8, 8))];
}

// ---- Main ----

if (process.argv[2] === "--ceiling-worker") {
  await ceilingWorker(process.argv.slice(3));
  process.disconnect();
} else {
  const loadAtStart = loadavg();
  const wanted = process.argv.slice(2);
  const want = (name) => wanted.length === 0 || wanted.includes(name);
  let pgWhy;
  try {
    await adminQuery("SELECT 1");
  } catch (error) {
    pgWhy = error.message;
  }
  if (pgWhy !== undefined) {
    console.log(
      `(no PostgreSQL at ${ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} (${pgWhy}): its parts skipped; set REEL_TEST_PG_URL or run scripts/postgres-for-tests.sh)`,
    );
  }
  const pgOk = pgWhy === undefined;
  const rows = [];
  const onSignal = () => void dropDatabases().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  try {
    if (want("scaling") || wanted.includes("shared"))
      rows.push(...(await scaling(pgOk, wanted.includes("shared"))));
    if (want("overhead")) rows.push(...(await overhead(pgOk)));
    if (want("ceiling") && pgOk) rows.push(...(await ceiling()));
    if (wanted.includes("start") && pgOk) rows.push(...(await startRounds()));
    if (wanted.includes("warmup") && pgOk) rows.push(...(await warmupRounds()));
  } finally {
    await dropDatabases();
  }
  const load = (l) => l.map((x) => x.toFixed(1)).join(", ");
  rows.push([
    "load average (1, 5, 15 min) at start / end",
    `${load(loadAtStart)} / ${load(loadavg())} on ${cpus().length} cores`,
  ]);
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
}
