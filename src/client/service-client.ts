// What the client of the service is (ServiceClient: one function per endpoint) and what it is given:
// the address and key, the retry rules, the timeouts, hooks told of retries and answers; and a file
// to upload as a stream the caller controls.
import type { Dispatcher } from "undici";
import { DEFAULTS } from "../defaults.js";
import type { Logger } from "../log/logger.js";
import type {
  Asset,
  GeneratedAudio,
  GenerationRequest,
  GenerationTask,
  Id,
  SpeechRequest,
} from "../service-contract/api-types.js";
import type { ServiceError } from "../errors/service.js";
import type { RetryOptions } from "./retry-policy.js";

export interface Timeouts {
  /** TCP (and TLS) connect. @defaultValue 10_000 */
  readonly connectMs: number;
  /** From sending the request to the response headers. @defaultValue 60_000 */
  readonly headersMs: number;
  /** Longest silence while reading a response body. @defaultValue 60_000 */
  readonly bodyMs: number;
  /**
   * One whole exchange, from sending to the answer's last byte: the two above are per silence, and
   * a server that sends a byte now and then defeats them. An upload gets one more second per
   * UPLOAD_MIN_BYTES_PER_S (client.ts) of its file. @defaultValue 120_000
   */
  readonly callMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = DEFAULTS.timeouts;

export interface ClientOptions {
  /** e.g. "https://api.example.com" (no trailing /v1). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** @defaultValue a logger that writes nothing */
  readonly logger?: Logger;
  readonly retry?: Partial<RetryOptions>;
  readonly timeouts?: Partial<Timeouts>;
  /** Keep-alive connections per origin. @defaultValue 16 */
  readonly connections?: number;
  /**
   * Inject a transport (the session's, see transport.ts; tests, proxies): not closed by close().
   * When given, `timeouts` and `connections` (but `callMs`) are ignored.
   */
  readonly dispatcher?: Dispatcher;
  /** Random source of the backoff jitter. @defaultValue Math.random */
  readonly random?: () => number;
  /** Told before each wait between attempts (to show the user why nothing seems to happen). */
  readonly onRetry?: (retry: {
    readonly error: ServiceError;
    readonly attempt: number;
    readonly delayMs: number;
  }) => void;
  /**
   * Told as each attempt ends (metrics): the status the service answered, undefined when no answer
   * came (the network, a timeout). `endpoint`: "METHOD /v1/route/{id}".
   */
  readonly onAnswer?: (endpoint: string, status: number | undefined) => void;
}

/**
 * A file to upload as a stream the caller controls (reel uploads from the descriptor it checked the
 * file through, never by opening a path again). `read` is called once per attempt: a stream can be
 * read once only. An error it throws ends the upload before its last bytes and is thrown as is.
 */
export interface UploadSource {
  /** The part's file name; the service tells the format by content. */
  readonly filename: string;
  /** Exactly the number of bytes `read` yields. */
  readonly size: number;
  readonly read: () => AsyncIterable<Uint8Array>;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface ServiceClient {
  readonly baseUrl: string;
  /** Whether the service has answered any call yet (any status): it is reachable at this address. */
  readonly answered: boolean;
  /** The session's connections (injected, or the client's own): downloads go through it too. */
  readonly dispatcher: Dispatcher;
  /** Uploads a file (a path, or a source's stream), streamed (never read whole into memory). */
  uploadAsset(file: string | UploadSource, options?: CallOptions): Promise<{ id: Id }>;
  getAsset(id: Id, options?: CallOptions): Promise<Asset>;
  deleteAsset(id: Id, options?: CallOptions): Promise<{ id: Id }>;
  /** Costed: never retried once it may have taken effect (throws OutcomeUnknownError). */
  createSpeech(body: SpeechRequest, options?: CallOptions): Promise<GeneratedAudio>;
  /** Costed: never retried once it may have taken effect (throws OutcomeUnknownError). */
  submitGeneration(body: GenerationRequest, options?: CallOptions): Promise<{ id: Id }>;
  getGeneration(id: Id, options?: CallOptions): Promise<GenerationTask>;
  close(): Promise<void>;
}
