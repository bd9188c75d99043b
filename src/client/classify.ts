// The one place that says what a failed call to the service means. Its callers ask one question each:
// the client's retry policy (try again now?), and the engine (stop the work? was anything created,
// and so paid for? submit again after a wait? is the asset gone?).
//
// What makes a costed call (submit a generation, create speech) "nothing created" for certain: the
// spec's refusals (401 a rejected key; no credits, whose status the spec leaves open, so a 402 or a
// 4xx about credits; 422 invalid parameters), HTTP's "not now" (429, 503), and a request that never
// left. A 403 is not among them: the spec answers a bad key with 401, and a 403 may come after the
// work was done. Any other answer (a 303 after creating the task, a 400, a 404 from a proxy, a 500)
// leaves its outcome unknown: trying again could make the user pay twice.
import {
  AuthError,
  CreditsError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  ProtocolError,
  RateLimitError,
  ServerError,
  ServiceError,
  ServiceUnreachableError,
  TimeoutError,
  UnexpectedAnswerError,
  ValidationError,
} from "../errors/service.js";

/**
 * - "read" (GET, DELETE): idempotent.
 * - "upload": costs no credits (a duplicate asset is harmless): judged like a read.
 * - "costed" (submit a generation, create speech): paid for if it took effect.
 */
export type CallKind = "read" | "upload" | "costed";

/**
 * - fatal: nothing else can succeed until the user acts (a rejected key, no credits, a paid call
 *   answered with a status the interface does not define, a service never reached): stop paying.
 * - refused: the service said no to this request, for certain; nothing was created. Permanent.
 * - transient: not now (429, 503, a request that never left, a read that broke off): try again
 *   later; for a costed call, nothing was created.
 * - unknown: a costed call may have taken effect: never sent again by itself (`uncertain`).
 */
export type Verdict = "fatal" | "refused" | "transient" | "unknown";

/** Why, in one word: what the engine branches on beyond the verdict. */
export type FailureReason =
  | "key" // 401 (or 403): the key is rejected
  | "credits" // no credits left
  | "unexpected-answer" // a paid call answered 3xx/4xx outside the interface (see UnexpectedAnswerError)
  | "unreachable" // never left, to a service that never answered this run
  | "invalid" // 422
  | "not-found" // 404: the task or asset is unknown to the service
  | "rejected" // any other 4xx
  | "rate-limited" // 429
  | "busy" // 503
  | "server" // another 5xx
  | "not-sent" // the connection failed before the request left (refused, DNS, TLS)
  | "connect-timeout" // the connection was not made in time: the request never left
  | "network" // the connection failed after the request may have left
  | "timeout" // no (complete) answer in time, after the request left
  | "unreadable" // an answer reel cannot read (ProtocolError)
  | "outcome-unknown" // OutcomeUnknownError of another cause
  | "not-a-service-error"; // anything else: reel's own fault, or the caller's abort

export interface Classification {
  readonly verdict: Verdict;
  readonly reason: FailureReason;
  /** Whether the call may have taken effect (and been paid for, if costed). */
  readonly mayHaveTakenEffect: boolean;
  /** The service's Retry-After, in ms, when it gave one. */
  readonly retryAfterMs: number | undefined;
  /**
   * The error to report. For a fatal verdict it is the condition that stops the work: the
   * AuthError / CreditsError behind an OutcomeUnknownError, an UnexpectedAnswerError for an answer
   * the interface does not define, a ServiceUnreachableError. Else `error` itself.
   */
  readonly error: unknown;
}

export interface ClassifyContext {
  /** The kind of call that failed. @defaultValue "read" (the client wraps a costed call's unknown outcome itself) */
  readonly kind?: CallKind;
  /**
   * The client, when a request that never left to a service that never answered must stop the
   * work (a wrong address, or the service is down): a one-shot run gives it, a watcher does not.
   * @defaultValue undefined (such a failure is transient)
   */
  readonly reach?: { readonly answered: boolean; readonly baseUrl: string };
}

/** What `error`, thrown by a call to the service, means. */
export function classify(error: unknown, context: ClassifyContext = {}): Classification {
  const costed = context.kind === "costed";
  const is = (
    verdict: Verdict,
    reason: FailureReason,
    mayHaveTakenEffect: boolean,
    reported: unknown = error,
  ): Classification => ({
    verdict,
    reason,
    mayHaveTakenEffect,
    retryAfterMs: (error as { retryAfterMs?: number } | undefined)?.retryAfterMs,
    error: reported,
  });
  if (!(error instanceof ServiceError)) return is("unknown", "not-a-service-error", costed);
  if (error instanceof OutcomeUnknownError) {
    const cause = error.cause;
    // A 403 on a paid call: uncertain, and the key is in doubt too.
    if (cause instanceof AuthError) return is("fatal", "key", true, cause);
    if (cause instanceof CreditsError) return is("fatal", "credits", true, cause);
    if (cause instanceof ServiceError && isUndefinedAnswer(cause)) {
      return is("fatal", "unexpected-answer", true, new UnexpectedAnswerError(cause));
    }
    return is("unknown", "outcome-unknown", true);
  }
  if (error instanceof UnexpectedAnswerError) return is("fatal", "unexpected-answer", true);
  if (error instanceof ServiceUnreachableError) return is("fatal", "unreachable", false);
  if (error instanceof AuthError) {
    // Only 401 proves that nothing was done (see the top of this file).
    return is("fatal", "key", costed && error.status !== 401);
  }
  if (error instanceof CreditsError) return is("fatal", "credits", false);
  if (error instanceof RateLimitError) return is("transient", "rate-limited", false);
  if (error instanceof ServerError) {
    if (error.status === 503) return is("transient", "busy", false);
    return costed ? is("unknown", "server", true) : is("transient", "server", false);
  }
  if (error instanceof NetworkError || error instanceof TimeoutError) {
    if (!error.sent) {
      const reach = context.reach;
      if (error instanceof NetworkError && reach !== undefined && !reach.answered) {
        return is(
          "fatal",
          "unreachable",
          false,
          new ServiceUnreachableError(
            `cannot reach the service at ${reach.baseUrl} (${error.message}). Check --base-url (REEL_BASE_URL) and that the service is up; nothing was sent, rerun once it answers.`,
            error,
          ),
        );
      }
      return is("transient", error instanceof TimeoutError ? "connect-timeout" : "not-sent", false);
    }
    const reason = error instanceof TimeoutError ? "timeout" : "network";
    return costed ? is("unknown", reason, true) : is("transient", reason, false);
  }
  if (error instanceof ValidationError && error.status === 422) return is("refused", "invalid", false);
  if (error instanceof ProtocolError) return is(costed ? "unknown" : "refused", "unreadable", costed);
  // A 404 or another 4xx: definite for a read; on a paid call, a proxy may answer so after the work.
  const reason = error instanceof NotFoundError ? "not-found" : "rejected";
  return costed ? is("unknown", reason, true) : is("refused", reason, false);
}

/** An answer that is neither a definite refusal nor a server error: see UnexpectedAnswerError. */
function isUndefinedAnswer(error: ServiceError): boolean {
  return error.status !== undefined && error.status >= 300 && error.status < 500;
}
