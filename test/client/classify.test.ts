// classify(): the one judgement of a failed call. The errors are the client's own classes, built as
// the client builds them from an answer (no service needed: the function reads nothing else).
import { describe, expect, it } from "vitest";
import { classify } from "../../src/client/index.js";
import {
  AuthError,
  CreditsError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  ProtocolError,
  RateLimitError,
  RequestError,
  ServerError,
  ServiceUnreachableError,
  TimeoutError,
  UnexpectedAnswerError,
  ValidationError,
} from "../../src/errors/service.js";
import { decideRetry } from "../../src/client/retry-policy.js";

const at = (status?: number) => ({ endpoint: "POST /v1/generations", status });
const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

describe("classify", () => {
  const cases = [
    // [error, kind, verdict, reason, mayHaveTakenEffect]
    [new AuthError(at(401)), "costed", "fatal", "key", false],
    [new AuthError(at(403)), "costed", "fatal", "key", true],
    [new AuthError(at(401)), "read", "fatal", "key", false],
    [new CreditsError(at(402)), "costed", "fatal", "credits", false],
    [new ValidationError(at(422), []), "costed", "refused", "invalid", false],
    [new RateLimitError(at(429), 2_000), "costed", "transient", "rate-limited", false],
    [new ServerError(at(503)), "costed", "transient", "busy", false],
    [new ServerError(at(500)), "costed", "unknown", "server", true],
    [new ServerError(at(500)), "read", "transient", "server", false],
    [new NetworkError(at(), false, refused), "costed", "transient", "not-sent", false],
    [new NetworkError(at(), true, refused), "costed", "unknown", "network", true],
    [new NetworkError(at(), true, refused), "read", "transient", "network", false],
    [new TimeoutError(at(), false, refused), "costed", "transient", "connect-timeout", false],
    [new TimeoutError(at(), true, refused), "costed", "unknown", "timeout", true],
    [new NotFoundError(at(404)), "read", "refused", "not-found", false],
    [new NotFoundError(at(404)), "costed", "unknown", "not-found", true],
    [new RequestError(at(400)), "costed", "unknown", "rejected", true],
    [new RequestError(at(400)), "read", "refused", "rejected", false],
    [new ProtocolError(at(200), "not JSON"), "read", "refused", "unreadable", false],
    [new ProtocolError(at(200), "not JSON"), "costed", "unknown", "unreadable", true],
    [new OutcomeUnknownError(new ServerError(at(500))), "costed", "unknown", "outcome-unknown", true],
    [new Error("a bug"), "read", "unknown", "not-a-service-error", false],
  ] as const;
  it.each(cases)("%s on a %s call: %s (%s)", (error, kind, verdict, reason, effect) => {
    const c = classify(error, { kind });
    expect([c.verdict, c.reason, c.mayHaveTakenEffect]).toEqual([verdict, reason, effect]);
  });

  it("gives the service's Retry-After", () => {
    expect(classify(new RateLimitError(at(429), 2_000)).retryAfterMs).toBe(2_000);
    expect(classify(new ServerError(at(503), 5_000)).retryAfterMs).toBe(5_000);
  });

  it("a 403 on a paid call is fatal and uncertain, and names the key's error as what stops the work", () => {
    const cause = new AuthError(at(403));
    const c = classify(new OutcomeUnknownError(cause), { kind: "costed" });
    expect([c.verdict, c.reason, c.mayHaveTakenEffect, c.error]).toEqual(["fatal", "key", true, cause]);
  });

  it("a paid call answered outside the interface (a redirect, 400, 404, 409) stops paying", () => {
    for (const cause of [new RequestError(at(303)), new RequestError(at(409)), new NotFoundError(at(404))]) {
      const c = classify(new OutcomeUnknownError(cause), { kind: "costed" });
      expect([c.verdict, c.reason, c.mayHaveTakenEffect]).toEqual(["fatal", "unexpected-answer", true]);
      expect(c.error).toBeInstanceOf(UnexpectedAnswerError);
    }
    // A 500 is a server error, not an answer outside the interface: uncertain, the work goes on.
    expect(classify(new OutcomeUnknownError(new ServerError(at(500)))).verdict).toBe("unknown");
  });

  it("a request that never left, to a service that never answered, is fatal only when asked to judge reach", () => {
    const error = new NetworkError(at(), false, refused);
    expect(classify(error).verdict).toBe("transient");
    expect(classify(error, { reach: { answered: true, baseUrl: "https://x.test" } }).verdict).toBe(
      "transient",
    );
    const c = classify(error, { reach: { answered: false, baseUrl: "https://x.test" } });
    expect([c.verdict, c.reason]).toEqual(["fatal", "unreachable"]);
    expect(c.error).toBeInstanceOf(ServiceUnreachableError);
    expect((c.error as Error).message).toContain("cannot reach the service at https://x.test");
    // A connect timeout is not judged so (as before).
    expect(
      classify(new TimeoutError(at(), false, refused), { reach: { answered: false, baseUrl: "x" } }).verdict,
    ).toBe("transient");
  });

  it("the retry policy retries exactly what is transient, and wraps a paid call's unknown outcome", () => {
    for (const [error, kind, verdict, , effect] of cases) {
      if (!(error instanceof Error) || !("endpoint" in error)) continue;
      const decision = decideRetry(error as never, kind);
      expect(decision.action).toBe(verdict === "transient" ? "retry" : "fail");
      if (kind === "costed" && decision.action === "fail") {
        expect(decision.error instanceof OutcomeUnknownError).toBe(effect);
        expect(classify(error as never, { kind: "costed" }).mayHaveTakenEffect).toBe(effect);
      }
    }
  });
});
