// The one place that decides whether a failed call is tried again. Each call has a kind:
// - "read" (GET, DELETE): idempotent, retried on 429, 5xx, network errors and timeouts.
// - "upload": costs no credits, retried like a read (a duplicate asset is harmless).
// - "costed" (submit a generation, create speech): retried only where the call provably did not take
//   effect (connection refused, 429, 503). After any other failure once the request may have left,
//   the outcome is unknown: retrying could make the user pay twice. What counts as "nothing was
//   created" is said in classify.ts, the one place that judges a failed call.
import { BACKOFF, backoffDelay as backoffAfter } from "../backoff.js";
import { DEFAULTS } from "../defaults.js";
import { type CallKind, classify } from "./classify.js";
import { OutcomeUnknownError, type ServiceError } from "../errors/service.js";

export type { CallKind };

export interface RetryOptions {
  /** Tries in all, the first included. @defaultValue 6 */
  readonly maxAttempts: number;
  /** Give up once this much time has passed since the first try. @defaultValue 120_000 */
  readonly maxElapsedMs: number;
  /** Backoff base: the n-th retry waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^n)]. @defaultValue 250 */
  readonly baseDelayMs: number;
  /** @defaultValue 20_000 */
  readonly maxDelayMs: number;
  /**
   * A Retry-After longer than this is not slept through: the error goes up to the caller, which
   * parks the work (the engine keeps polling other tasks meanwhile). @defaultValue 60_000
   */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = DEFAULTS.retry;

export type RetryDecision =
  | { readonly action: "retry"; readonly floorMs: number }
  | { readonly action: "fail"; readonly error: ServiceError };

/** What to do after `error` on a call of `kind`: try again only what classify calls transient. */
export function decideRetry(error: ServiceError, kind: CallKind): RetryDecision {
  const { verdict, mayHaveTakenEffect, retryAfterMs } = classify(error, { kind });
  if (verdict === "transient") return { action: "retry", floorMs: retryAfterMs ?? 0 };
  // Never sent again: a costed call that may have taken effect is said to be of unknown outcome.
  if (kind === "costed" && mayHaveTakenEffect && !(error instanceof OutcomeUnknownError)) {
    return { action: "fail", error: new OutcomeUnknownError(error) };
  }
  return { action: "fail", error };
}

/** The client's wait before retry number `retry` (0: the first): BACKOFF.clientRetry's shape, with `options`' numbers. */
export function backoffDelay(
  retry: number,
  floorMs: number,
  options: RetryOptions,
  random = Math.random,
): number {
  const schedule = {
    baseMs: options.baseDelayMs,
    maxMs: options.maxDelayMs,
    jitter: BACKOFF.clientRetry.jitter,
  };
  return backoffAfter(schedule, retry, { floorMs, random });
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
