// The typed client of the service: one function per endpoint of docs/service-api.md, over one
// keep-alive undici Agent (transport.ts), with the retry rules of retry-policy.ts. The key goes only into the
// Authorization header of requests to `baseUrl`; nothing else ever sees it.
import { openAsBlob } from "node:fs";
import { basename } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher, FormData } from "undici";
import { ReelError } from "../errors/reel-error.js";
import { silentLogger } from "../log/logger.js";
import {
  decodeAsset,
  decodeAudio,
  decodeErrorBody,
  decodeIdResponse,
  decodeTask,
  parseJson,
} from "./decode.js";
import {
  DecodeError,
  CallDeadlineError,
  AuthError,
  type CallInfo,
  CreditsError,
  describeTransportFailure,
  NetworkError,
  NotFoundError,
  ProtocolError,
  RateLimitError,
  RequestError,
  ServerError,
  ServiceError,
  TimeoutError,
  ValidationError,
} from "../errors/service.js";
import { exchange, MAX_ANSWER_BYTES } from "./exchange.js";
import {
  backoffDelay,
  type CallKind,
  DEFAULT_RETRY,
  decideRetry,
  parseRetryAfter,
  type RetryOptions,
} from "./retry-policy.js";
import { idPath, jsonBody, multipartBody } from "./request-bodies.js";
import { makeScrubber, type Scrub, scrubStrings } from "./scrub.js";
import { type ClientOptions, DEFAULT_TIMEOUTS, type ServiceClient, type Timeouts } from "./service-client.js";
import { makeDispatcher } from "./transport.js";
import { newFormData } from "../undici-parts.js";

/** The slowest upload still waited for (64 KiB/s): a 100 MB file may take 26 minutes. */
const UPLOAD_MIN_BYTES_PER_S = 64 * 1024;

interface Call<T> {
  readonly kind: CallKind;
  readonly method: "GET" | "POST" | "DELETE";
  readonly path: string;
  /** Made anew for every attempt: a streamed body can be read once only. */
  readonly body?: () => Promise<{
    body: string | FormData | Readable;
    contentType?: string;
    /** The exact length of a stream body, sent as content-length (FormData measures itself). */
    length?: number;
    /** The size of an uploaded file: the call's deadline grows with it. */
    bytes?: number;
  }>;
  readonly decode: (json: unknown) => T;
}

/**
 * Codes of errors raised before a single byte of the request could leave. UND_ERR_INVALID_ARG:
 * undici refused the request itself (a header value with a line break, say), before connecting.
 * The TLS ones end the handshake, which comes before the request (a certificate refused, a server
 * that answers the handshake in plain http).
 */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_INVALID_ARG",
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
]);

export function makeClient(options: ClientOptions): ServiceClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  // A base URL may carry a path prefix (a proxy): requests go to origin + prefix + /v1/...
  const { origin, pathname } = new URL(baseUrl);
  const basePath = pathname.replace(/\/+$/, "");
  const log = options.logger ?? silentLogger;
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry };
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const random = options.random ?? Math.random;
  // Its own only when none is injected: then closed by close(); an injected one is its owner's.
  const ownDispatcher = options.dispatcher
    ? undefined
    : makeDispatcher({ timeouts, connections: options.connections });
  const dispatcher: Dispatcher = options.dispatcher ?? ownDispatcher!;
  const authorization = `Bearer ${options.apiKey}`;
  const scrub = makeScrubber(options.apiKey);
  const host = new URL(origin).host;
  let answered = false;

  async function once<T>(call: Call<T>, endpoint: string, signal: AbortSignal | undefined): Promise<T> {
    const prepared = call.body ? await call.body() : undefined;
    const headers: Record<string, string> = { authorization, accept: "application/json" };
    if (prepared?.contentType) headers["content-type"] = prepared.contentType;
    if (prepared?.length !== undefined) headers["content-length"] = String(prepared.length);
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    let truncated: boolean;
    try {
      ({ status, retryAfter, text, truncated } = await exchange(
        dispatcher,
        {
          origin,
          path: `${basePath}${call.path}`,
          method: call.method,
          headers,
          body: prepared?.body ?? null,
          deadlineMs: timeouts.callMs + Math.ceil(((prepared?.bytes ?? 0) / UPLOAD_MIN_BYTES_PER_S) * 1000),
        },
        signal,
      ));
    } catch (error) {
      // A ReelError is the caller's own, from an upload's stream (the file changed): no transport
      // fault. The exchange's deadline is one (see transportError).
      if (signal?.aborted || (error instanceof ReelError && !(error instanceof CallDeadlineError)))
        throw error;
      options.onAnswer?.(endpoint, undefined);
      throw transportError({ endpoint }, error, host, scrub);
    }
    answered = true;
    options.onAnswer?.(endpoint, status);
    if (status >= 200 && status < 300) {
      if (truncated) {
        throw new ProtocolError(
          { endpoint, status },
          `an answer longer than ${MAX_ANSWER_BYTES} bytes (cut off)`,
        );
      }
      try {
        // Every string the service sent is scrubbed of the key before anyone stores or prints it.
        return call.decode(scrubStrings(parseJson(text), scrub));
      } catch (error) {
        // A decoding error quotes the answer (JSON.parse shows its start).
        if (error instanceof DecodeError) {
          // Quoted from the text scrubbed whole (a quote cut short may end inside the key).
          let message = error.message;
          try {
            call.decode(parseJson(scrub(text)));
          } catch (again) {
            if (again instanceof DecodeError) message = again.message;
          }
          throw new ProtocolError({ endpoint, status }, scrub(message));
        }
        throw error;
      }
    }
    throw statusError(endpoint, status, text, retryAfter, scrub);
  }

  async function perform<T>(call: Call<T>, signal: AbortSignal | undefined): Promise<T> {
    const endpoint = `${call.method} ${call.path.replace(/\/\d+$/, "/{id}")}`;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      let failure: ServiceError;
      try {
        const result = await once(call, endpoint, signal);
        log.debug({ endpoint, attempt, ms: Date.now() - started }, "call ok");
        return result;
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        failure = error;
      }
      const decision = decideRetry(failure, call.kind);
      if (decision.action === "fail") throw decision.error;
      // A very long Retry-After is not slept through: the caller parks the work instead.
      if (decision.floorMs > retry.maxRetryAfterMs) throw failure;
      const delay = backoffDelay(attempt - 1, decision.floorMs, retry, random);
      if (attempt >= retry.maxAttempts || Date.now() - started + delay > retry.maxElapsedMs) throw failure;
      log.warn({ endpoint, attempt, delayMs: delay, code: failure.code, status: failure.status }, "retrying");
      options.onRetry?.({ error: failure, attempt, delayMs: delay });
      try {
        await sleep(delay, undefined, { signal });
      } catch (error) {
        // Stopped between tries: nothing is on the wire, and a request never sent stays known as such
        // (a costed one must not be taken for one whose outcome is unknown).
        if (failure instanceof NetworkError && !failure.sent) throw failure;
        throw error;
      }
    }
  }

  return {
    baseUrl,
    dispatcher,
    get answered() {
      return answered;
    },
    uploadAsset: (file, o) =>
      perform(
        {
          kind: "upload",
          method: "POST",
          path: "/v1/assets",
          body: async () => {
            if (typeof file !== "string") return multipartBody(file);
            // A file-backed Blob: undici streams it part by part, the file is never held in memory.
            const form = await newFormData();
            const blob = await openAsBlob(file);
            form.set("file", blob, basename(file));
            return { body: form, bytes: blob.size };
          },
          decode: decodeIdResponse,
        },
        o?.signal,
      ),
    getAsset: (id, o) =>
      perform(
        { kind: "read", method: "GET", path: `/v1/assets/${idPath(id)}`, decode: decodeAsset },
        o?.signal,
      ),
    deleteAsset: (id, o) =>
      perform(
        { kind: "read", method: "DELETE", path: `/v1/assets/${idPath(id)}`, decode: decodeIdResponse },
        o?.signal,
      ),
    createSpeech: (body, o) =>
      perform(
        { kind: "costed", method: "POST", path: "/v1/audios", body: jsonBody(body), decode: decodeAudio },
        o?.signal,
      ),
    submitGeneration: (body, o) =>
      perform(
        {
          kind: "costed",
          method: "POST",
          path: "/v1/generations",
          body: jsonBody(body),
          decode: decodeIdResponse,
        },
        o?.signal,
      ),
    getGeneration: (id, o) =>
      perform(
        { kind: "read", method: "GET", path: `/v1/generations/${idPath(id)}`, decode: decodeTask },
        o?.signal,
      ),
    close: async () => {
      await ownDispatcher?.close();
    },
  };
}

function transportError(info: CallInfo, error: unknown, host: string, scrub: Scrub): ServiceError {
  const code = (error as { code?: string }).code ?? "";
  const detail = describeTransportFailure(error, host, scrub);
  if (code === "UND_ERR_CONNECT_TIMEOUT") return new TimeoutError(info, false, error, detail);
  if (
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    error instanceof CallDeadlineError
  )
    return new TimeoutError(info, true, error, detail);
  return new NetworkError(info, !NOT_SENT_CODES.has(code), error, detail);
}

function statusError(
  endpoint: string,
  status: number,
  text: string,
  retryAfter: string | undefined,
  scrub: Scrub,
): ServiceError {
  // Scrubbed whole first, then each part: a body that is not JSON is quoted cut to its start, which
  // could end inside the key, where no scrub of the cut text would find it.
  const decoded = decodeErrorBody(scrub(text));
  const message = decoded.message === undefined ? undefined : scrub(decoded.message);
  const issues = decoded.issues.map((issue) => ({ path: scrub(issue.path), message: scrub(issue.message) }));
  const info: CallInfo =
    message === undefined ? { endpoint, status } : { endpoint, status, serviceMessage: message };
  if (status === 401 || status === 403) return new AuthError(info);
  if (status === 402 || (status >= 400 && status < 500 && /credit|balance/i.test(message ?? ""))) {
    return new CreditsError(info);
  }
  if (status === 422) return new ValidationError(info, issues);
  if (status === 429) return new RateLimitError(info, parseRetryAfter(retryAfter));
  if (status === 404) return new NotFoundError(info);
  if (status >= 500) return new ServerError(info, parseRetryAfter(retryAfter));
  return new RequestError(info);
}
