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
// one line. The scaling rounds count their claim statements from the calls of reel_bound_full,
// which needs track_functions in each round's database (the tests' role is granted the setting).
// BENCH_FLEET_JOBS sets the overhead run's job count (default 2,000), BENCH_FLEET_ROUNDS how many
// times its SQLite and PostgreSQL rounds alternate (default 1). BENCH_FLEET_BASELINE, the
// bin/reel.js of another build (say the main branch's, built), runs each scaling round with it too,
// just before this build's, its lines marked "(baseline)": before and after side by side in one run
// (the overhead part's PostgreSQL round and the ceiling's rounds too).
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
// The parts: bench/fleet/ (settings.js: every setting above read once; databases.js, cpu.js,
// runners.js, figures.js: what the rounds share; scaling.js, start.js, overhead.js, ceiling.js: one
// part each).
//
// How the CPU is counted: a runner is a child process, so its CPU (user + system) is read from this
// process's cutime/cstime in /proc/self/stat once it has exited; the sandbox runs in this process
// and is not counted. PostgreSQL's share is the CPU of the server processes serving the round's
// database (backends, found by their title in /proc and sampled every 100 ms); the server's own
// background processes (WAL writer, checkpointer), shared with whatever else uses the server, are
// left out.
import { cpus, loadavg } from "node:os";
import { ceiling, ceilingWorker } from "./fleet/ceiling.js";
import { adminQuery, dropDatabases } from "./fleet/databases.js";
import { overhead } from "./fleet/overhead.js";
import { scaling } from "./fleet/scaling.js";
import { ADMIN_URL } from "./fleet/settings.js";
import { startRounds, warmupRounds } from "./fleet/start.js";

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
