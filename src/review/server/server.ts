// The review page's web server: loopback only, every request behind the token and the Host check
// (guards.ts), the page, its JSON API and live events, and the videos of OUT. No request is logged:
// the token is in the first one's address.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ReviewStore } from "../../state/job-store.js";
import { decide, RequestRefused, retake, undo } from "./actions.js";
import { TakeEvents } from "./events.js";
import { checkToken, fileInOut, hostAllowed, tokenCookie, tokenMatches } from "./guards.js";
import type { ManifestVars } from "./manifest-vars.js";
import { reviewPage } from "./page.js";
import { sendFile } from "./static-file.js";
import { readTakes } from "./takes-view.js";

export interface ReviewServerOptions {
  readonly store: ReviewStore;
  /** The service, as the store names it. */
  readonly baseUrl: string;
  readonly outDir: string;
  /** 0: a free port. */
  readonly port: number;
  /** The reviewer given to the command (--reviewer, REEL_REVIEWER), if any: else the page asks. */
  readonly reviewer?: string;
  /** What the page's title says of the project. */
  readonly title: string;
  /** The manifests whose variables the page shows (and, PATH given, the only ones it shows). */
  readonly manifests?: ManifestVars;
}

export interface ReviewServer {
  /** The address to open, with the token. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const BODY_MAX = 16 * 1024;

function plain(res: ServerResponse, status: number, text: string): void {
  res
    .writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
    .end(`${text}\n`);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
    .end(JSON.stringify(value));
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/json")) {
    throw new RequestRefused(415, "send JSON");
  }
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_MAX) throw new RequestRefused(413, "too large");
    chunks.push(chunk);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // refused below
  }
  throw new RequestRefused(400, "send a JSON object");
}

export async function startReviewServer(options: ReviewServerOptions): Promise<ReviewServer> {
  const token = randomBytes(24).toString("base64url");
  const read = () => readTakes(options.store, options.baseUrl, options.outDir, options.manifests);
  const events = new TakeEvents(read, () => options.store.changeMark());
  let port = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, port))
      return plain(res, 403, "forbidden: this server answers only http://127.0.0.1:" + port);
    const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
    const method = req.method ?? "GET";
    // The first load: the token from the address goes into a cookie, and the address drops it.
    const given = url.searchParams.get("token");
    if (url.pathname === "/" && given !== null && method === "GET") {
      if (!tokenMatches(given, token)) return plain(res, 403, "forbidden: wrong token");
      res
        .writeHead(303, { "set-cookie": tokenCookie(token), location: "/", "cache-control": "no-store" })
        .end();
      return;
    }
    const check = checkToken(req.headers as Parameters<typeof checkToken>[0], token);
    if (check === "missing") return plain(res, 401, "unauthorized: open the address reel review printed");
    if (check === "wrong") return plain(res, 403, "forbidden: wrong token");

    if (method === "GET" && url.pathname === "/") {
      const nonce = randomBytes(16).toString("base64");
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; media-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'`,
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
      });
      res.end(reviewPage({ nonce, title: options.title, reviewer: options.reviewer ?? null }));
      return;
    }
    if (method === "GET" && url.pathname === "/api/takes") return json(res, 200, { takes: await read() });
    if (method === "GET" && url.pathname === "/api/events") return events.listen(res);
    if (method === "POST" && ["/api/decide", "/api/undo", "/api/retake"].includes(url.pathname)) {
      const body = await bodyOf(req);
      const store = options.store;
      let retakeKey: string | undefined;
      if (url.pathname === "/api/decide") await decide(store, options.baseUrl, body);
      else if (url.pathname === "/api/undo") await undo(store, options.baseUrl, body);
      else retakeKey = await retake(store, options.baseUrl, body);
      await events.poll();
      return json(res, 200, { ok: true, ...(retakeKey === undefined ? {} : { queued: retakeKey }) });
    }
    if ((method === "GET" || method === "HEAD") && url.pathname.startsWith("/out/")) {
      const file = fileInOut(options.outDir, url.pathname.slice("/out/".length));
      if (file === undefined) return plain(res, 404, "not found");
      return sendFile(req, res, file);
    }
    return plain(res, 404, "not found");
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // A refusal says why; anything else says no more than that it failed (no path, no secret).
      if (error instanceof RequestRefused) json(res, error.status, { ok: false, error: error.message });
      else json(res, 500, { ok: false, error: "the store could not be read or written; see the terminal" });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    close: async () => {
      events.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
