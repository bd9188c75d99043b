// The fleet bench's settings, each read once from the environment (their meaning: fleet-bench.js's
// head), and the constants of its rounds.
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/reel.js", import.meta.url));
export const BASELINE = process.env.BENCH_FLEET_BASELINE;
/** The bench's entry point: the store's ceiling runs its writers as children of it. */
export const ENTRY = fileURLToPath(new URL("../fleet-bench.js", import.meta.url));
export const NAMED = process.env.BENCH_FLEET_NAMED === "1";
const NODE_FLAGS = (process.env.BENCH_FLEET_NODE_OPTIONS ?? "").split(/\s+/).filter(Boolean);
export const ONLY_RUNNERS = process.env.BENCH_FLEET_RUNNERS?.split(",").map(Number);
/** node's flags for a runner of `bin`: BENCH_FLEET_NODE_OPTIONS for this build's, none for another's. */
export const nodeFlags = (bin) => (bin === BIN ? NODE_FLAGS : []);
export const ADMIN_URL =
  process.env.REEL_TEST_PG_URL ?? "postgres://reel_test:reel_test@127.0.0.1:5432/postgres";
export const CLOCK_TICKS = 100; // USER_HZ: /proc's CPU times are in hundredths of a second
export const RUN_TAG = randomBytes(4).toString("hex");
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** BENCH_FLEET_SCALE_JOBS: more jobs share each runner's start (a multiple of 8; default 400). */
export const SCALE_JOBS = Number(process.env.BENCH_FLEET_SCALE_JOBS ?? 400);
/** BENCH_FLEET_REPEAT: each scaling round run this many times, in turn; the ratios from medians. */
export const REPEAT = Number(process.env.BENCH_FLEET_REPEAT ?? 1);
export const SCALE_MANIFESTS = 8;
export const SLOTS = Number(process.env.BENCH_FLEET_SLOTS ?? 16);
export const TIME_SCALE = 0.025;
/** One to three chunks of 5 or 10 s: tasks of 125 to 625 ms at TIME_SCALE, the same in every round. */
export const scaleDurations = (i) => Array.from({ length: 1 + (i % 3) }, (_, c) => ((i + c) % 2 ? 5 : 10));

/** The environment of a runner: this one's, without any REEL_* setting of the person running the bench. */
export function runnerEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("REEL_")));
  return { ...env, ...extra };
}
