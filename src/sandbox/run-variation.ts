// How long a task runs and whether it fails, as a service with real variance would: a
// factor drawn per request in [1 - jitter, 1 + jitter], a slow drift of the service's speed, and a
// rate of tasks that end Fail. Each draw comes from the request's content and the seed, not from
// the order of arrival, so the same job runs as long on two sandboxes of one seed whatever order
// their clients submit in: what a side-by-side benchmark needs.
import { createHash } from "node:crypto";

export interface RunVariation {
  /** Milliseconds of Running for a task of `seconds` of video with this body, starting at `at`. */
  runMs(canonicalBody: string, seconds: number, at: number): number;
  /** Whether the task with this body ends Fail rather than Success. */
  fails(canonicalBody: string): boolean;
}

export interface VariationOptions {
  readonly seed: number;
  /** Wall-clock seconds of Running per second of video. */
  readonly timeScale: number;
  readonly jitter: number;
  /** Fraction of the run time added per minute since `startedAt` (negative: faster). */
  readonly driftPerMinute: number;
  readonly failRate: number;
  readonly startedAt: number;
}

/** A number in [0, 1) from the seed, the body and what it is for. */
function draw(seed: number, body: string, what: string): number {
  return createHash("sha256").update(`${seed}\n${what}\n${body}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The slowest a drift makes the service: never stopped, never faster than a tenth of its run time. */
const DRIFT_FLOOR = 0.1;

export function runVariation(o: VariationOptions): RunVariation {
  return {
    runMs(body, seconds, at) {
      const factor = o.jitter === 0 ? 1 : 1 - o.jitter + 2 * o.jitter * draw(o.seed, body, "run");
      const drift = Math.max(DRIFT_FLOOR, 1 + (o.driftPerMinute * (at - o.startedAt)) / 60_000);
      return seconds * o.timeScale * 1000 * factor * drift;
    },
    fails(body) {
      return o.failRate > 0 && draw(o.seed, body, "fail") < o.failRate;
    },
  };
}
