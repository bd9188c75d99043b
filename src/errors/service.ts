// Every failure of a call to the service, as one class each with a fixed `code`, and the two the
// client raises on the way (DecodeError, CallDeadlineError). They carry what a user needs to act
// (endpoint, status, the service's own message, 422 field paths) and never the API key: messages
// are built from the response, never from the request headers.
import { type ErrorCode, ReelError } from "./reel-error.js";

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

  constructor(code: ErrorCode, message: string, info: CallInfo, options?: { cause?: unknown }) {
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

/**
 * The connection failed. `sent` is false only when the request provably never left (refused, DNS).
 * `detail`: what went wrong, in reel's words (see describeTransportFailure).
 */
export class NetworkError extends ServiceError {
  readonly sent: boolean;

  constructor(info: CallInfo, sent: boolean, cause: unknown, detail = describeTransportFailure(cause)) {
    super("E_NETWORK", `${info.endpoint}: network error: ${detail}`, info, { cause });
    this.sent = sent;
  }
}

export class TimeoutError extends ServiceError {
  readonly sent: boolean;

  constructor(info: CallInfo, sent: boolean, cause: unknown, detail = describeTransportFailure(cause)) {
    super("E_TIMEOUT", `${info.endpoint}: timed out: ${detail}`, info, { cause });
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

/**
 * A paid call answered with a status the interface does not define (a redirect, a 400, 404, 409):
 * a wrong base URL, or a proxy in the way. Its outcome is unknown (the job is uncertain); every
 * further submission would meet the same answer, each one possibly paid, so the run stops paying.
 */
export class UnexpectedAnswerError extends ServiceError {
  constructor(cause: ServiceError) {
    super(
      "E_UNEXPECTED_ANSWER",
      `${cause.endpoint} answered ${cause.status}, which the service's interface does not define (${cause.message}). The request may have taken effect, so its job is uncertain, and nothing more is sent: check --base-url (a wrong path or a proxy answers like this), then rerun (uncertain jobs are sent again only with --resubmit-uncertain).`,
      { endpoint: cause.endpoint, status: cause.status },
      { cause },
    );
  }
}

/**
 * A submission answered with the task id of another job: a task id names one task, so the service
 * is at fault (or it was started again without its data, and gives its ids out again). The job is
 * uncertain (a task may have been made, perhaps paid, that reel cannot follow), and a run sends
 * no more to a service that answers so.
 */
export class TaskIdHeldError extends ServiceError {
  constructor(
    readonly taskId: string,
    readonly job: string,
    readonly holder: string,
  ) {
    super(
      "E_TASK_ID_HELD",
      `POST /v1/generations answered task ${taskId} for ${job}, which ${holder} already holds: a fault of the service (a task id names one task). ${job} is uncertain (a task may have been made for it, perhaps paid, that reel cannot follow), and nothing more is sent: check the service, then rerun (uncertain jobs are sent again only with --resubmit-uncertain).`,
      { endpoint: "POST /v1/generations" },
    );
  }
}

/** The service could not be reached at all before it ever answered: a wrong address, or it is down. */
export class ServiceUnreachableError extends ServiceError {
  constructor(message: string, cause: NetworkError) {
    super("E_UNREACHABLE", message, { endpoint: cause.endpoint }, { cause });
  }
}

/** An answer's body that is no JSON of the shape expected; the client reports it as a ProtocolError. */
export class DecodeError extends ReelError {
  constructor(message: string) {
    super("E_DECODE", message);
  }
}

/** The whole exchange took longer than its deadline. Raised after the request may have left. */
export class CallDeadlineError extends ReelError {
  constructor(ms: number) {
    super("E_CALL_DEADLINE", `no complete answer within ${Math.round(ms / 1000)} s`);
  }
}

function suffix(info: CallInfo): string {
  return info.serviceMessage ? `: ${info.serviceMessage}` : "";
}

/** What a certificate check's code means, for the certificate codes a user can act on. */
const CERTIFICATE_PROBLEMS: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "certificate not trusted",
  UNABLE_TO_GET_ISSUER_CERT: "certificate not trusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "certificate not trusted",
  SELF_SIGNED_CERT_IN_CHAIN: "certificate not trusted (a self-signed one in its chain)",
  DEPTH_ZERO_SELF_SIGNED_CERT: "certificate not trusted (self-signed)",
  CERT_HAS_EXPIRED: "certificate expired",
  CERT_NOT_YET_VALID: "certificate not valid yet",
  CERT_REVOKED: "certificate revoked",
  ERR_TLS_CERT_ALTNAME_INVALID: "certificate made out for another name",
};

/** Whether `cause` is a certificate the client refused: trying again cannot help. */
export function isCertificateFailure(cause: unknown): boolean {
  return Object.hasOwn(CERTIFICATE_PROBLEMS, (cause as { code?: string } | undefined)?.code ?? "");
}

/**
 * A failed connection in reel's words, on one line. TLS failures become "TLS handshake with HOST
 * failed: <reason> (CODE)": OpenSSL's own text spans lines and names C source files, and it would
 * land as it is in the summary and the records. `host`: where the connection went, when known;
 * `scrub`: takes the API key out of the error's own text.
 */
export function describeTransportFailure(
  cause: unknown,
  host?: string,
  scrub: (text: string) => string = (text) => text,
): string {
  const c = cause as { code?: string; message?: string } | undefined;
  if (!c) return "unknown";
  const code = c.code ?? "";
  const message = c.message ?? String(cause);
  const tls = tlsReason(code, message);
  if (tls !== undefined) return `TLS handshake${host ? ` with ${host}` : ""} failed: ${tls} (${code})`;
  // On one line: the log has one line per event, and the summary one line per job.
  // The only part that may hold the server's own text (a certificate's names, say): `scrub` it.
  const line = scrub(message.replace(/\s*\n\s*/g, " ").trim());
  return code && !line.includes(code) ? `${line} (${code})` : line;
}

/** Whether `cause` is a failed TLS handshake (or another TLS failure): said by describeTransportFailure. */
export function isTlsFailure(cause: unknown): boolean {
  const c = cause as { code?: string; message?: string } | undefined;
  return c !== undefined && tlsReason(c.code ?? "", c.message ?? "") !== undefined;
}

function tlsReason(code: string, message: string): string | undefined {
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER") return "the server does not speak TLS (is it plain http?)";
  const certificate = CERTIFICATE_PROBLEMS[code];
  if (certificate !== undefined) return certificate;
  if (!code.startsWith("ERR_SSL_") && !/SSL routines/.test(message)) return undefined;
  // "...:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../deps/...": the
  // reason is the field after the function's name.
  const reason = /SSL routines:[^:]*:([^:\n]+)/.exec(message)?.[1]?.trim();
  if (reason === undefined) return "TLS error";
  return /\balert\b/.test(reason) ? `the server refused it (${reason})` : reason;
}
