// One HTTP exchange of the client: the request out, the status, Retry-After and the whole body back
// as text. JSON calls go through undici's dispatch API with a handler that gathers the body:
// `request` wraps every response body in a Node stream, which cost about a third of an exchange's
// CPU (GET on the CI machine: 66-103 us through dispatch, 115-153 us through request + text()), and
// a run makes two of these exchanges per video. Uploads (a FormData or stream body) keep `request`.
// Both paths raise undici's own errors, so the client maps them to "sent or not" the same way.
// Both bound what a service can make reel hold: an answer is kept up to MAX_ANSWER_BYTES, and the
// whole exchange has a deadline (undici's headersTimeout and bodyTimeout are per silence: a server
// sending a byte every few seconds would otherwise hold a call forever).
import type { Readable } from "node:stream";
import type { Dispatcher, FormData } from "undici";
import { request } from "../undici-parts.js";
import { CallDeadlineError } from "../errors/service.js";

/**
 * The service's answers are JSON of a few hundred bytes, an error page a few KB: 1 MiB leaves room
 * for any of them, and a body that never ends is cut there instead of filling memory.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

export interface ExchangeRequest {
  /** scheme://host[:port] */
  readonly origin: string;
  /** Path and query, starting with "/". */
  readonly path: string;
  readonly method: "GET" | "POST" | "DELETE";
  readonly headers: Record<string, string>;
  readonly body: string | FormData | Readable | null;
  /** The whole exchange, from sending to the last byte of the answer. */
  readonly deadlineMs: number;
}

export interface ExchangeResponse {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly text: string;
  /** The answer was longer than MAX_ANSWER_BYTES: `text` is its first part, the rest was not read. */
  readonly truncated: boolean;
}

export function exchange(
  dispatcher: Dispatcher,
  req: ExchangeRequest,
  signal: AbortSignal | undefined,
): Promise<ExchangeResponse> {
  if (req.body === null || typeof req.body === "string") return dispatchExchange(dispatcher, req, signal);
  return requestExchange(dispatcher, req, signal);
}

function firstValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

async function requestExchange(
  dispatcher: Dispatcher,
  req: ExchangeRequest,
  signal: AbortSignal | undefined,
): Promise<ExchangeResponse> {
  // Uploads are few: an AbortController of their own carries both the caller's stop and the deadline.
  const abort = new AbortController();
  const onAbort = (): void => abort.abort(signal!.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => abort.abort(new CallDeadlineError(req.deadlineMs)), req.deadlineMs);
  try {
    const response = await request(`${req.origin}${req.path}`, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      dispatcher,
      signal: abort.signal,
    });
    const retryAfter = firstValue(response.headers["retry-after"]);
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > MAX_ANSWER_BYTES) {
        response.body.destroy();
        return { status: response.statusCode, retryAfter, text: cut(chunks), truncated: true };
      }
    }
    return { status: response.statusCode, retryAfter, text: cut(chunks), truncated: false };
  } catch (error) {
    // undici raises the abort's reason, or its own error naming it: the deadline is said as such.
    if (abort.signal.reason instanceof CallDeadlineError && !signal?.aborted) throw abort.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** The first MAX_ANSWER_BYTES of `chunks`, as text. */
function cut(chunks: Buffer[]): string {
  const all = Buffer.concat(chunks);
  return (all.length > MAX_ANSWER_BYTES ? all.subarray(0, MAX_ANSWER_BYTES) : all).toString("utf8");
}

function dispatchExchange(
  dispatcher: Dispatcher,
  req: ExchangeRequest,
  signal: AbortSignal | undefined,
): Promise<ExchangeResponse> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let chunks: Buffer[] = [];
    let bytes = 0;
    let status = 0;
    let retryAfter: string | undefined;
    /** Why the exchange was cut by us (the caller's stop, the deadline, a too long answer). */
    let cutBy: Error | undefined;
    let settled = false;
    const cutOff = (reason: Error): void => {
      cutBy ??= reason;
      // Not started yet: cut as soon as it starts (onRequestStart), never let it leave later unseen.
      controller?.abort(reason);
    };
    const onAbort = (): void => cutOff(signal!.reason as Error);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => {
      const late = new CallDeadlineError(req.deadlineMs);
      cutOff(late);
      settle(() => reject(late));
    }, req.deadlineMs);
    /** Once only: undici may still call the handler after the answer was taken (an abort's error). */
    const settle = (done: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      done();
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        chunks = []; // undici may start a request again (pipeline retry) before any response
        bytes = 0;
        if (cutBy) c.abort(cutBy);
      },
      onResponseStart(_c, statusCode, headers) {
        if (statusCode < 200) return; // 1xx informational: the real answer follows
        status = statusCode;
        retryAfter = firstValue(headers["retry-after"]);
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes > MAX_ANSWER_BYTES) {
          // The status is known: the caller judges it with the first part of the body.
          // Settled first: the abort calls onResponseError at once.
          settle(() => resolve({ status, retryAfter, text: cut(chunks), truncated: true }));
          cutOff(new Error("answer longer than MAX_ANSWER_BYTES"));
        }
      },
      onResponseEnd() {
        settle(() =>
          resolve({ status, retryAfter, text: Buffer.concat(chunks).toString("utf8"), truncated: false }),
        );
      },
      onResponseError(_c, error) {
        settle(() => reject(error));
      },
    };
    try {
      dispatcher.dispatch(
        { origin: req.origin, path: req.path, method: req.method, headers: req.headers, body: req.body },
        handler,
      );
    } catch (error) {
      settle(() => reject(error as Error));
    }
  });
}
