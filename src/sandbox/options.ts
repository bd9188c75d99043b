// The knobs of the emulator in one place, each with its default, and the one function that checks
// them: a bad value fails at start with the option's name rather than as odd behaviour later.
import { randomBytes } from "node:crypto";
import { UsageError } from "../errors/usage.js";
import type { Logger } from "../log/logger.js";
import { silentLogger } from "../log/logger.js";

/**
 * The reason a task the sandbox fails on purpose (`taskFailRate`) gives: reel's advice after a run
 * tells such a failure apart from one of the video by it (src/drivers/next-steps.ts).
 */
export const INJECTED_FAILURE_REASON = "injected failure (sandbox taskFailRate)";

/** Failures to inject. Rates are probabilities per request, from 0 to 1. */
export interface SandboxFaults {
  /** Seed of the PRNG that decides every fault: the same seed and request order give the same faults. @defaultValue 1 */
  readonly seed?: number;
  /** 429 Too Many Requests with Retry-After, before any effect. @defaultValue 0 */
  readonly rate429?: number;
  /** 503 Service Unavailable with Retry-After, before any effect. @defaultValue 0 */
  readonly rate503?: number;
  /** Value of the Retry-After header of 429 and 503, in seconds; may be fractional or 0. @defaultValue 1 */
  readonly retryAfterSeconds?: number;
  /** The request takes effect (task, speech, upload, deletion created/done), then 500 is returned. @defaultValue 0 */
  readonly rate500AfterEffect?: number;
  /** The socket is destroyed without a response; before or after the effect, half and half. @defaultValue 0 */
  readonly rateDrop?: number;
  /** Added latency per request in milliseconds: a fixed number or a uniform `[min, max]`. @defaultValue 0 */
  readonly latencyMs?: number | readonly [number, number];
  /** A file download sends its full Content-Length, then about half the bytes, then closes. @defaultValue 0 */
  readonly rateTruncateDownload?: number;
  /**
   * A task ends Fail ("injected failure") instead of Success, its credits given back; drawn per
   * request from its content and the sandbox's `seed`. @defaultValue 0
   */
  readonly taskFailRate?: number;
  /**
   * Routes the faults apply to, as `"METHOD /template"`: `"POST /v1/generations"`,
   * `"GET /v1/generations/:id"`, `"POST /v1/audios"`, `"POST /v1/assets"`, `"GET /v1/assets/:id"`,
   * `"DELETE /v1/assets/:id"`, `"GET /files/:token"`. @defaultValue every route
   */
  readonly routes?: readonly string[];
}

export interface SandboxOptions {
  /** TCP port; 0 picks a free one. @defaultValue 0 */
  readonly port?: number;
  /** Interface to listen on. @defaultValue "127.0.0.1" */
  readonly host?: string;
  /** The one key accepted as `Authorization: Bearer <key>`. @defaultValue a random `sk-sandbox-<32 hex>` */
  readonly apiKey?: string;
  /**
   * Where uploads and speech are stored (and, with `persist`, everything else); kept on close when
   * given. Required when `persist` is true. @defaultValue a fresh temp dir, removed on close
   */
  readonly dataDir?: string;
  /**
   * Keep assets, speech, result videos, tasks, the id sequence and the credit balance in `dataDir`
   * (a SQLite file, `sandbox.db`), so that a sandbox started again on the same `dataDir`, on any
   * port, continues where this one stopped, even after kill -9: old ids keep working, no id is
   * handed out twice, and tasks move on by wall-clock time as if the sandbox had never stopped.
   * Counters are not kept: each start begins them empty. Only one sandbox at a time may use a
   * persistent `dataDir`. @defaultValue false (everything lives in memory and ends with the process)
   */
  readonly persist?: boolean;
  /** Tasks Running at once on the "server"; the others wait in Pending. @defaultValue 4 */
  readonly slots?: number;
  /** Wall-clock seconds of Running per second of video. @defaultValue 0.02 (a 10 s video runs 200 ms) */
  readonly timeScale?: number;
  /** Time a task spends in PreProcessing, in milliseconds. @defaultValue 20 */
  readonly preProcessingMs?: number;
  /**
   * Run times vary by a factor in [1 - jitter, 1 + jitter], drawn per request from its content and
   * `seed` (the same job runs as long on two sandboxes of one seed), from 0 to 0.9. @defaultValue 0
   */
  readonly jitter?: number;
  /**
   * The service's speed drifts: each minute since start adds this fraction of the run time
   * (negative: it speeds up; never below a tenth). @defaultValue 0
   */
  readonly driftPerMinute?: number;
  /** Seed of the run times' jitter and of the tasks that fail (`faults.taskFailRate`). @defaultValue 1 */
  readonly seed?: number;
  /**
   * Credit balance; a generation costs its seconds of video. With `persist`, it applies only when
   * the data dir is new: afterwards the stored balance carries over and this value is ignored (use
   * `setCredits` to change it). @defaultValue undefined (unlimited)
   */
  readonly credits?: number;
  /**
   * Hand out ids above 2^53, from 1800000000000000001, to catch clients that lose digits. With
   * `persist`, the stored sequence continues; turning this on for an existing data dir jumps
   * ahead to the big range, turning it off never goes back. @defaultValue false
   */
  readonly bigIds?: boolean;
  /**
   * Start the id sequence from the clock (see firstId), for a sandbox that keeps nothing across
   * starts but may be restarted under its clients (`reel sandbox` without --data-dir). Ignored with
   * `persist`. @defaultValue false (ids from 1001: what tests read)
   */
  readonly clockIds?: boolean;
  /** Failures to inject. @defaultValue none */
  readonly faults?: SandboxFaults;
  /** Receives one debug line per request; never the key. @defaultValue a silent logger */
  readonly logger?: Logger;
  /**
   * Told of every request once it is answered (or dropped): what `reel sandbox` prints for a person
   * to read. Never given the key. @defaultValue none
   */
  readonly onRequest?: (request: SandboxRequest) => void;
}

/** One request as the request log shows it. */
export interface SandboxRequest {
  readonly method: string;
  /** The route's template (`/v1/generations/:id`), or "*" for a path the service does not have. */
  readonly route: string;
  /**
   * The path as requested for the API's routes (`/v1/generations/1017`), percent-encoded; the
   * template for file downloads (their token is the file's only secret) and unknown paths.
   */
  readonly path: string;
  /** The status sent, or "drop" when the connection was closed without one (an injected fault). */
  readonly status: number | "drop";
  readonly ms: number;
  /** What the request was about: `task 1017 Running`, `asset 1003`, `injected 429`... */
  readonly note: string | undefined;
}

export interface ResolvedOptions {
  readonly port: number;
  readonly host: string;
  readonly apiKey: string | undefined;
  readonly dataDir: string | undefined;
  readonly persist: boolean;
  readonly slots: number;
  readonly timeScale: number;
  readonly preProcessingMs: number;
  readonly jitter: number;
  readonly driftPerMinute: number;
  readonly seed: number;
  readonly credits: number | undefined;
  readonly bigIds: boolean;
  readonly clockIds: boolean;
  readonly faults: SandboxFaults;
  readonly logger: Logger;
  readonly onRequest: ((request: SandboxRequest) => void) | undefined;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `\`[${value.join(", ")}]\` (array)`;
  return `\`${String(value)}\` (${typeof value})`;
}

function expect(ok: boolean, name: string, wanted: string, value: unknown): void {
  if (!ok) throw new UsageError(`Expected \`${name}\` to be ${wanted}, got ${describe(value)}`);
}

const isNonNegative = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;
const isRate = (v: unknown): boolean => v === undefined || (isNonNegative(v) && v <= 1);

/** A fresh random key in the shape of the service's keys, so it is recognisable in a shell. */
export function makeApiKey(): string {
  return `sk-sandbox-${randomBytes(16).toString("hex")}`;
}

/** The key itself never appears in the message: it may be a real one pasted by mistake. */
export function checkApiKey(key: string): void {
  expect(
    key.length > 0 && /^[\x21-\x7e]+$/.test(key),
    "apiKey",
    "a non-empty string of visible ASCII",
    "(hidden)",
  );
}

export function checkCredits(credits: number | undefined): void {
  expect(
    credits === undefined || isNonNegative(credits),
    "credits",
    "a number from 0 and up or undefined",
    credits,
  );
}

export function checkFaults(faults: SandboxFaults): void {
  for (const name of [
    "rate429",
    "rate503",
    "rate500AfterEffect",
    "rateDrop",
    "rateTruncateDownload",
    "taskFailRate",
  ] as const) {
    expect(isRate(faults[name]), `faults.${name}`, "a number from 0 to 1", faults[name]);
  }
  const total =
    (faults.rate429 ?? 0) + (faults.rate503 ?? 0) + (faults.rate500AfterEffect ?? 0) + (faults.rateDrop ?? 0);
  expect(total <= 1, "faults.rate429 + rate503 + rate500AfterEffect + rateDrop", "at most 1", total);
  expect(
    faults.seed === undefined || Number.isInteger(faults.seed),
    "faults.seed",
    "an integer",
    faults.seed,
  );
  expect(
    faults.retryAfterSeconds === undefined || isNonNegative(faults.retryAfterSeconds),
    "faults.retryAfterSeconds",
    "a number from 0 and up",
    faults.retryAfterSeconds,
  );
  const latency = faults.latencyMs;
  if (Array.isArray(latency)) {
    const [min, max] = latency as readonly unknown[];
    expect(
      latency.length === 2 && isNonNegative(min) && isNonNegative(max) && min <= max,
      "faults.latencyMs",
      "a number from 0 and up or a [min, max] pair",
      latency,
    );
  } else {
    expect(
      latency === undefined || isNonNegative(latency),
      "faults.latencyMs",
      "a number from 0 and up",
      latency,
    );
  }
}

/** Defaults applied, every value checked. */
export function resolveOptions(options: SandboxOptions): ResolvedOptions {
  const port = options.port ?? 0;
  expect(Number.isInteger(port) && port >= 0 && port <= 65535, "port", "an integer from 0 to 65535", port);
  const slots = options.slots ?? 4;
  expect(Number.isInteger(slots) && slots >= 1, "slots", "an integer from 1 and up", slots);
  const timeScale = options.timeScale ?? 0.02;
  expect(isNonNegative(timeScale), "timeScale", "a number from 0 and up", timeScale);
  const preProcessingMs = options.preProcessingMs ?? 20;
  expect(isNonNegative(preProcessingMs), "preProcessingMs", "a number from 0 and up", preProcessingMs);
  const jitter = options.jitter ?? 0;
  expect(isNonNegative(jitter) && jitter <= 0.9, "jitter", "a number from 0 to 0.9", jitter);
  const driftPerMinute = options.driftPerMinute ?? 0;
  expect(
    typeof driftPerMinute === "number" &&
      Number.isFinite(driftPerMinute) &&
      driftPerMinute > -1 &&
      driftPerMinute <= 10,
    "driftPerMinute",
    "a number above -1 and at most 10",
    driftPerMinute,
  );
  const seed = options.seed ?? 1;
  expect(Number.isInteger(seed), "seed", "an integer", seed);
  if (options.apiKey !== undefined) checkApiKey(options.apiKey);
  checkCredits(options.credits);
  const faults = options.faults ?? {};
  checkFaults(faults);
  const persist = options.persist ?? false;
  expect(typeof persist === "boolean", "persist", "a boolean", persist);
  if (persist) {
    expect(
      typeof options.dataDir === "string" && options.dataDir !== "",
      "dataDir",
      "a directory path when `persist` is true (where the sandbox keeps its state)",
      options.dataDir,
    );
  }
  return {
    port,
    host: options.host ?? "127.0.0.1",
    apiKey: options.apiKey,
    dataDir: options.dataDir,
    persist,
    slots,
    timeScale,
    preProcessingMs,
    jitter,
    driftPerMinute,
    seed,
    credits: options.credits,
    bigIds: options.bigIds ?? false,
    clockIds: options.clockIds ?? false,
    faults,
    logger: options.logger ?? silentLogger,
    onRequest: options.onRequest,
  };
}
