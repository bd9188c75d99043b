// The one place that decides whether a failed call is tried again. Each call has a kind:
// - "read" (GET, DELETE): idempotent, retried on 429, 5xx, network errors and timeouts.
// - "upload": costs no credits, retried like a read (a duplicate asset is harmless).
// - "costed" (submit a generation, create speech): retried only where the call provably did not take
//   effect (connection refused, 429, 503). After any other failure once the request may have left,
//   the outcome is unknown: retrying could make the user pay twice. Only the refusals the spec and
//   HTTP make definite count as "nothing was created" (see isDefiniteRefusal); any other answer (a
//   303 after creating the task, a 400, a 404 from a proxy, a 500) leaves the outcome unknown.
import {
  AuthError,
  CreditsError,
  NetworkError,
  OutcomeUnknownError,
  RateLimitError,
  ServerError,
  type ServiceError,
  TimeoutError,
  ValidationError,
} from "./errors.js";

export type CallKind = "read" | "upload" | "costed";

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

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 6,
  maxElapsedMs: 120_000,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
};

export type RetryDecision =
  | { readonly action: "retry"; readonly floorMs: number }
  | { readonly action: "fail"; readonly error: ServiceError };

/** What to do after `error` on a call of `kind`. */
export function decideRetry(error: ServiceError, kind: CallKind): RetryDecision {
  const floorMs = (error as { retryAfterMs?: number }).retryAfterMs ?? 0;
  if (error instanceof RateLimitError) return { action: "retry", floorMs };
  if (error instanceof ServerError) {
    if (kind !== "costed" || error.status === 503) return { action: "retry", floorMs };
    return { action: "fail", error: new OutcomeUnknownError(error) };
  }
  if (error instanceof NetworkError || error instanceof TimeoutError) {
    if (kind !== "costed" || !error.sent) return { action: "retry", floorMs: 0 };
    return { action: "fail", error: new OutcomeUnknownError(error) };
  }
  if (kind === "costed" && !isDefiniteRefusal(error)) {
    return { action: "fail", error: new OutcomeUnknownError(error) };
  }
  return { action: "fail", error };
}

/**
 * Whether a costed call's failure proves that nothing was created: the spec's refusals (401 a
 * rejected key; no credits, whose status the spec leaves open, so a 402 or a 4xx about credits;
 * 422 invalid parameters), HTTP's "not now" (429, 503), and a request that never left. A 403 is not
 * among them: the spec answers a bad key with 401, and a 403 may come after the work was done.
 */
export function isDefiniteRefusal(error: ServiceError): boolean {
  if (error instanceof NetworkError || error instanceof TimeoutError) return !error.sent;
  return (
    (error instanceof AuthError && error.status === 401) ||
    error instanceof CreditsError ||
    (error instanceof ValidationError && error.status === 422) ||
    error instanceof RateLimitError ||
    (error instanceof ServerError && error.status === 503)
  );
}

/** Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"), never below the service's floor. */
export function backoffDelay(
  retry: number,
  floorMs: number,
  options: RetryOptions,
  random = Math.random,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.max(floorMs, Math.floor(random() * ceiling));
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
