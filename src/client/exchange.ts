// One HTTP exchange of the client: the request out, the status, Retry-After and the whole body back
// as text. JSON calls go through undici's dispatch API with a handler that gathers the body:
// `request` wraps every response body in a Node stream, which cost about a third of an exchange's
// CPU (GET on the CI machine: 66-103 us through dispatch, 115-153 us through request + text()), and
// a run makes two of these exchanges per video. Uploads (a FormData or stream body) keep `request`.
// Both paths raise undici's own errors, so the client maps them to "sent or not" the same way.
import type { Readable } from "node:stream";
import { type Dispatcher, type FormData, request } from "undici";

export interface ExchangeRequest {
  /** scheme://host[:port] */
  readonly origin: string;
  /** Path and query, starting with "/". */
  readonly path: string;
  readonly method: "GET" | "POST" | "DELETE";
  readonly headers: Record<string, string>;
  readonly body: string | FormData | Readable | null;
}

export interface ExchangeResponse {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly text: string;
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
  const response = await request(`${req.origin}${req.path}`, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    dispatcher,
    signal,
  });
  const retryAfter = firstValue(response.headers["retry-after"]);
  return { status: response.statusCode, retryAfter, text: await response.body.text() };
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
    let status = 0;
    let retryAfter: string | undefined;
    const onAbort = (): void => controller?.abort(signal!.reason as Error);
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (): void => signal?.removeEventListener("abort", onAbort);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        chunks = []; // undici may start a request again (pipeline retry) before any response
        if (signal?.aborted) c.abort(signal.reason as Error);
      },
      onResponseStart(_c, statusCode, headers) {
        if (statusCode < 200) return; // 1xx informational: the real answer follows
        status = statusCode;
        retryAfter = firstValue(headers["retry-after"]);
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        settle();
        resolve({ status, retryAfter, text: Buffer.concat(chunks).toString("utf8") });
      },
      onResponseError(_c, error) {
        settle();
        reject(error);
      },
    };
    try {
      dispatcher.dispatch(
        { origin: req.origin, path: req.path, method: req.method, headers: req.headers, body: req.body },
        handler,
      );
    } catch (error) {
      settle();
      reject(error as Error);
    }
  });
}
