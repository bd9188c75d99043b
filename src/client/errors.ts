// Every failure of a call to the service, as one class each with a fixed `code`. They carry what a
// user needs to act (endpoint, status, the service's own message, 422 field paths) and never the
// API key: messages are built from the response, never from the request headers.
import { ReelError } from "../errors.js";

export interface CallInfo {
  /** e.g. "POST /v1/generations" */
  readonly endpoint: string;
  readonly status?: number;
  /** The service's message, as it sent it. */
  readonly serviceMessage?: string;
}

export class ServiceError extends ReelError {
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly serviceMessage: string | undefined;

  constructor(code: string, message: string, info: CallInfo, options?: { cause?: unknown }) {
    super(code, message, options);
    this.endpoint = info.endpoint;
    this.status = info.status;
    this.serviceMessage = info.serviceMessage;
  }
}

/** 401: the key is missing, wrong, deleted or expired. Fatal for a run. */
export class AuthError extends ServiceError {
  constructor(info: CallInfo) {
    super(
      "E_AUTH",
      `${info.endpoint}: the service rejected the API key (${info.status ?? 401}). Check REEL_API_KEY: it may be mistyped, deleted or expired.`,
      info,
    );
  }
}

/** Refused for lack of credits (402, or a 4xx that speaks of credits/balance). Fatal for a run. */
export class CreditsError extends ServiceError {
  constructor(info: CallInfo) {
    super(
      "E_CREDITS",
      `${info.endpoint}: the account has not enough credits${info.serviceMessage ? ` (${info.serviceMessage})` : ""}. Top up the console account, then rerun: nothing is lost.`,
      info,
    );
  }
}

export interface FieldIssue {
  /** Field path as the service gave it, e.g. "body.chunks.0.duration". */
  readonly path: string;
  readonly message: string;
}

/** 422: the request was refused as invalid. Permanent for that request. */
export class ValidationError extends ServiceError {
  readonly issues: readonly FieldIssue[];

  constructor(info: CallInfo, issues: readonly FieldIssue[]) {
    const detail = issues.length
      ? issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ")
      : (info.serviceMessage ?? "no detail");
    super(
      "E_VALIDATION",
      `${info.endpoint}: the service refused the request as invalid (422): ${detail}`,
      info,
    );
    this.issues = issues;
  }
}

/** 429: slow down. `retryAfterMs` is the service's floor, when it gave one. */
export class RateLimitError extends ServiceError {
  readonly retryAfterMs: number | undefined;

  constructor(info: CallInfo, retryAfterMs: number | undefined) {
    super(
      "E_RATE_LIMITED",
      `${info.endpoint}: rate limited (429)${retryAfterMs !== undefined ? `, retry after ${Math.ceil(retryAfterMs / 1000)} s` : ""}`,
      info,
    );
    this.retryAfterMs = retryAfterMs;
  }
}

export class NotFoundError extends ServiceError {
  constructor(info: CallInfo) {
    super("E_NOT_FOUND", `${info.endpoint}: not found (404)${suffix(info)}`, info);
  }
}

/** 5xx. 503 may carry a Retry-After floor. */
export class ServerError extends ServiceError {
  readonly retryAfterMs: number | undefined;

  constructor(info: CallInfo, retryAfterMs?: number) {
    super("E_SERVER", `${info.endpoint}: service error (${info.status})${suffix(info)}`, info);
    this.retryAfterMs = retryAfterMs;
  }
}

/** Any other refusal (4xx) that is not one of the above. */
export class RequestError extends ServiceError {
  constructor(info: CallInfo) {
    super("E_REQUEST", `${info.endpoint}: request refused (${info.status})${suffix(info)}`, info);
  }
}

/** The connection failed. `sent` is false only when the request provably never left (refused, DNS). */
export class NetworkError extends ServiceError {
  readonly sent: boolean;

  constructor(info: CallInfo, sent: boolean, cause: unknown) {
    super("E_NETWORK", `${info.endpoint}: network error: ${describeCause(cause)}`, info, { cause });
    this.sent = sent;
  }
}

export class TimeoutError extends ServiceError {
  readonly sent: boolean;

  constructor(info: CallInfo, sent: boolean, cause: unknown) {
    super("E_TIMEOUT", `${info.endpoint}: timed out: ${describeCause(cause)}`, info, { cause });
    this.sent = sent;
  }
}

/** The answer was not the JSON the spec describes. */
export class ProtocolError extends ServiceError {
  constructor(info: CallInfo, what: string) {
    super("E_PROTOCOL", `${info.endpoint}: unexpected response: ${what}`, info);
  }
}

/**
 * A costed call (submit a generation, create speech) may have taken effect but no answer came back.
 * Retrying could pay twice, so the engine records the job as `uncertain` instead.
 */
export class OutcomeUnknownError extends ServiceError {
  constructor(cause: ServiceError) {
    super(
      "E_OUTCOME_UNKNOWN",
      `${cause.endpoint}: outcome unknown, the request may have taken effect (${cause.message})`,
      { endpoint: cause.endpoint, status: cause.status, serviceMessage: cause.serviceMessage },
      { cause },
    );
  }
}

/** Conditions that stop a whole run: nothing else can succeed until the user acts. */
/** The service could not be reached at all before it ever answered: a wrong address, or it is down. */
export class ServiceUnreachableError extends ServiceError {
  constructor(message: string, cause: NetworkError) {
    super("E_UNREACHABLE", message, { endpoint: cause.endpoint }, { cause });
  }
}

export function isFatalServiceError(error: unknown): error is AuthError | CreditsError {
  return error instanceof AuthError || error instanceof CreditsError;
}

function suffix(info: CallInfo): string {
  return info.serviceMessage ? `: ${info.serviceMessage}` : "";
}

function describeCause(cause: unknown): string {
  const c = cause as { code?: string; message?: string } | undefined;
  if (!c) return "unknown";
  if (c.code === "ERR_SSL_WRONG_VERSION_NUMBER") {
    return "TLS handshake failed: the server does not speak TLS (is it plain http?) (ERR_SSL_WRONG_VERSION_NUMBER)";
  }
  // On one line: OpenSSL's messages carry line breaks, and the log has one line per event.
  const message = (c.message ?? String(cause)).replace(/\s*\n\s*/g, " ").trim();
  return c.code && !message.includes(c.code) ? `${message} (${c.code})` : message;
}
