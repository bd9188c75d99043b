// The emulator's HTTP server: auth, routing, fault injection around the handlers, and a close()
// that leaves nothing behind (sockets, timers, temp files), since every test starts its own.
//
// Where faults apply: only to authenticated requests on routes the service has (a wrong key is
// always a plain 401, an unknown path a plain 404), and only on the routes `faults.routes` names.
// 429, 503 and "drop before effect" happen before the handler runs; "500 after effect" and "drop
// after effect" after it (500 replaces only a 2xx: a refused request had no effect to hide). File
// downloads take latency and truncation only: a CDN does not rate-limit here.
//
// With `persist`, the state of the previous sandbox on the same data dir is loaded before the
// server listens, and every change is committed before the response that shows it (see
// persistence.ts); the SQLite module is imported only then, so the default sandbox pays nothing.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { UsageError } from "../errors/usage.js";
import { AssetStore } from "./assets.js";
import { AUTH_MESSAGES, checkBearer } from "./auth.js";
import { SandboxCounters } from "./counters.js";
import { CreditLedger } from "./credits.js";
import { FaultPlan } from "./faults.js";
import { serveFile } from "./files.js";
import { Generations } from "./generations.js";
import { HANDLERS, type HandlerDeps } from "./handlers.js";
import { firstId, makeIdSequence } from "./ids.js";
import { detailReply, type Reply } from "./json-io.js";
import {
  checkApiKey,
  checkCredits,
  checkFaults,
  makeApiKey,
  type ResolvedOptions,
  resolveOptions,
  type SandboxFaults,
  type SandboxOptions,
} from "./options.js";
import { NO_PERSISTENCE, type PersistedState, type SandboxPersistence } from "./persistence.js";
import { ResultVideos } from "./result-video.js";
import { runVariation } from "./run-variation.js";
import { matchRoute, type RouteMatch } from "./routes.js";
import { removeStrayFiles } from "./stray-files.js";
import { Timers } from "./timers.js";

export interface Sandbox {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly baseUrl: string;
  /** The key accepted now (changes with setApiKey). */
  readonly apiKey: string;
  readonly counters: SandboxCounters;
  /** Where assets are stored, and with `persist` the rest of the state. */
  readonly dataDir: string;
  /** Replaces the accepted key at once; requests with the old key get 401 from then on. */
  setApiKey(key: string): void;
  /** `undefined` makes the balance unlimited. With `persist`, the next sandbox on the data dir starts from it. */
  setCredits(credits: number | undefined): void;
  credits(): number | undefined;
  /** Every file address handed out so far answers 403 from now on, as expired signed URLs do. */
  expireFileUrls(): void;
  /** Replaces the fault settings and restarts the PRNG from their seed; `undefined` removes all faults. */
  setFaults(faults: SandboxFaults | undefined): void;
  /**
   * Stops listening, ends every connection and timer, releases a persistent data dir, removes the
   * data dir it created. Idempotent.
   */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
  // A reply sent before the body was read (401, 429 ...): drain the rest so the connection stays usable.
  if (!req.complete) req.resume();
  const body = Buffer.from(reply.body, "utf8");
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": String(body.length),
    ...reply.headers,
  });
  res.end(body);
}

/** What the request log says of a request, filled in as it is served. */
interface RequestNote {
  note?: string;
}

function drop(req: IncomingMessage): "drop" {
  req.socket.destroy();
  return "drop";
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const opts: ResolvedOptions = resolveOptions(options);
  const logger = opts.logger;
  const ownsDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), "reel-sandbox-")));
  const assetDir = join(dataDir, "assets");
  const tmpDir = join(dataDir, "tmp");
  await mkdir(assetDir, { recursive: true });
  await mkdir(tmpDir, { recursive: true });
  const resultVideos = new ResultVideos(join(dataDir, "results"));

  let persistence: SandboxPersistence = NO_PERSISTENCE;
  let persisted: PersistedState | undefined;
  if (opts.persist) {
    const { DATABASE_FILE, openPersistence } = await import("./sqlite-persistence.js");
    ({ persistence, state: persisted } = openPersistence(join(dataDir, DATABASE_FILE), {
      nextId: firstId(opts.bigIds),
      credits: opts.credits,
    }));
  }

  let apiKey = opts.apiKey ?? makeApiKey();
  let faults = new FaultPlan(opts.faults);
  let baseUrl = "";
  const counters = new SandboxCounters();
  const timers = new Timers((error) => logger.error({ err: error }, "sandbox timer failed"));
  const credits = new CreditLedger(persisted ? persisted.credits : opts.credits, (balance) =>
    persistence.saveCredits(balance),
  );
  // A stored sequence only moves forward: `bigIds` on an old data dir jumps to the big range, and
  // leaving it off later never goes back to ids already handed out.
  const first = firstId(opts.bigIds, opts.clockIds && !opts.persist);
  const nextId = makeIdSequence(persisted && persisted.nextId > first ? persisted.nextId : first, (next) =>
    persistence.saveNextId(next),
  );
  const assets = new AssetStore(() => baseUrl, persistence);
  const generations = new Generations({
    slots: opts.slots,
    preProcessingMs: opts.preProcessingMs,
    variation: runVariation({
      seed: opts.seed,
      timeScale: opts.timeScale,
      jitter: opts.jitter,
      driftPerMinute: opts.driftPerMinute,
      failRate: opts.faults.taskFailRate ?? 0,
      startedAt: Date.now(),
    }),
    timers,
    counters,
    assets,
    nextId,
    resultVideos,
    refund: (cost) => credits.refund(cost),
    persistence,
    logger,
  });
  const deps: HandlerDeps = { counters, credits, generations, assets, nextId, persistence, assetDir, tmpDir };
  if (persisted) {
    try {
      assets.restore(persisted.assets, { assetDir, results: resultVideos });
      generations.restore(persisted.tasks, Date.now());
      await removeStrayFiles(assetDir, tmpDir, assets.liveFileNames());
    } catch (error) {
      timers.clearAll();
      persistence.close();
      throw error;
    }
  }

  async function serveApi(
    req: IncomingMessage,
    res: ServerResponse,
    match: Extract<RouteMatch, { kind: "api" }>,
    log: RequestNote,
  ): Promise<number | "drop"> {
    const decision = faults.decideApi(match.route);
    if (decision.latencyMs > 0) await timers.sleep(decision.latencyMs);
    const fault = decision.fault;
    if (fault.kind !== "none") log.note = `injected fault: ${fault.kind}`;
    if (fault.kind === "429" || fault.kind === "503") {
      counters.countFault(fault.kind);
      const headers = { "retry-after": String(fault.retryAfterSeconds) };
      const reply =
        fault.kind === "429"
          ? detailReply(429, `Rate limit exceeded: retry after ${fault.retryAfterSeconds} s`, headers)
          : detailReply(503, "Service temporarily unavailable", headers);
      send(req, res, reply);
      return reply.status;
    }
    if (fault.kind === "drop-before-effect") {
      counters.countFault(fault.kind);
      return drop(req);
    }
    const reply = await HANDLERS[match.route](req, match.param, deps);
    if (reply.note !== undefined)
      log.note = fault.kind === "none" ? reply.note : `${reply.note}, ${log.note}`;
    if (fault.kind === "drop-after-effect") {
      counters.countFault(fault.kind);
      return drop(req);
    }
    if (fault.kind === "500-after-effect" && reply.status >= 200 && reply.status < 300) {
      counters.countFault(fault.kind);
      send(req, res, detailReply(500, "Internal Server Error"));
      return 500;
    }
    send(req, res, reply);
    return reply.status;
  }

  async function route(
    req: IncomingMessage,
    res: ServerResponse,
    match: RouteMatch,
    path: string,
    generation: string | null,
    log: RequestNote,
  ) {
    if (match.kind === "file") {
      const decision = faults.decideDownload("GET /files/:token");
      if (decision.latencyMs > 0) await timers.sleep(decision.latencyMs);
      const file = assets.file(match.token);
      if (!file) {
        send(req, res, detailReply(404, "Not Found"));
        return 404;
      }
      if (assets.expired(generation)) {
        send(req, res, detailReply(403, "This address has expired; ask the service for a new one."));
        return 403;
      }
      if (file.taskId !== undefined && req.method === "GET") counters.countDownload(file.taskId, Date.now());
      if (file.taskId !== undefined) log.note = `video of task ${file.taskId}`;
      const status = await serveFile(req, res, file, decision.fault);
      if (status === "drop") {
        counters.countFault("truncated-download");
        log.note = `${log.note ?? "file"}, injected fault: truncated`;
      }
      return status;
    }
    if (path.startsWith("/v1/") || path === "/v1") {
      const auth = checkBearer(req.headers, apiKey);
      if (auth !== "ok") {
        log.note = auth === "missing" ? "no key sent" : "wrong key";
        send(req, res, detailReply(401, AUTH_MESSAGES[auth], { "www-authenticate": "Bearer" }));
        return 401;
      }
    }
    if (match.kind === "method-not-allowed") {
      send(req, res, detailReply(405, "Method Not Allowed", { allow: match.allow }));
      return 405;
    }
    if (match.kind === "not-found") {
      send(req, res, detailReply(404, "Not Found"));
      return 404;
    }
    return serveApi(req, res, match, log);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = req.method ?? "GET";
    let path = "/";
    let generation: string | null = null;
    try {
      const url = new URL(req.url ?? "/", "http://sandbox");
      path = url.pathname;
      generation = url.searchParams.get("v");
    } catch {
      // A request target URL() cannot read is a path the service does not have.
    }
    let match: RouteMatch;
    try {
      match = matchRoute(method, path);
    } catch {
      match = { kind: "not-found", template: "*" }; // undecodable %-escapes
    }
    let status: number | "drop";
    const log: RequestNote = {};
    try {
      status = await route(req, res, match, path, generation, log);
    } catch (error) {
      logger.error({ err: error, method, route: match.template }, "sandbox handler failed");
      if (res.headersSent) status = drop(req);
      else {
        send(req, res, detailReply(500, "Internal Server Error"));
        status = 500;
      }
    }
    counters.countRequest(method, match.template, status);
    const ms = Math.round(performance.now() - started);
    logger.debug({ method, route: match.template, status, ms }, "sandbox request");
    opts.onRequest?.({
      method,
      route: match.template,
      path: match.kind === "api" ? path : match.template === "*" ? path.slice(0, 80) : match.template,
      status,
      ms,
      note: log.note,
    });
  }

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(
        error.code === "EADDRINUSE"
          ? new UsageError(`port ${opts.port} on ${opts.host} is already in use`, { cause: error })
          : error,
      );
    };
    server.once("error", onError);
    server.listen(opts.port, opts.host, () => {
      server.off("error", onError);
      resolve();
    });
  }).catch(async (error: unknown) => {
    timers.clearAll();
    persistence.close();
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${urlHost(opts.host)}:${port}`;
  logger.debug({ baseUrl }, "sandbox listening");

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      timers.clearAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      persistence.close();
      if (ownsDataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return closing;
  };

  return {
    baseUrl,
    get apiKey() {
      return apiKey;
    },
    counters,
    dataDir,
    setApiKey(key) {
      checkApiKey(key);
      apiKey = key;
    },
    setCredits(balance) {
      checkCredits(balance);
      credits.set(balance);
    },
    credits: () => credits.balance(),
    expireFileUrls: () => assets.expireUrls(),
    setFaults(next) {
      const settings = next ?? {};
      checkFaults(settings);
      faults = new FaultPlan(settings);
    },
    close,
  };
}
