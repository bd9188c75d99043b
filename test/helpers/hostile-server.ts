// A service that misbehaves on purpose: a node:http server on 127.0.0.1, port 0, whose every answer
// the test writes. Closed (its connections too) after each test, whatever the test did.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

export interface HostileRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  /** The request's body, read whole (an upload's multipart included). */
  readonly body: string;
}

export type HostileHandler = (req: HostileRequest, res: ServerResponse) => void;

export interface HostileServer {
  readonly baseUrl: string;
  readonly port: number;
  /** Every request received so far, in order. */
  readonly requests: HostileRequest[];
  /** Requests so far with this method and a path starting with `prefix`. */
  count(method: string, prefix: string): number;
  /** Replaces the handler (a service "fixed" between two runs). */
  answer(handler: HostileHandler): void;
  readonly server: Server;
}

/** Call at the top of a test file: `hostile(handler)` starts a server, closed after the test. */
export function useHostileServers(): (handler: HostileHandler) => Promise<HostileServer> {
  const started: Server[] = [];
  afterEach(async () => {
    for (const server of started.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  return async (first) => {
    let handler = first;
    const requests: HostileRequest[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const seen = {
          method: req.method ?? "",
          url: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
        };
        requests.push(seen);
        handler(seen, res);
      });
    });
    started.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      port,
      requests,
      count: (method, prefix) =>
        requests.filter((r) => r.method === method && r.url.startsWith(prefix)).length,
      answer(next) {
        handler = next;
      },
      server,
    };
  };
}

/** Answers `body` as JSON with `status` (and extra headers). */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A real MP4 (the sandbox's result video, a few KB). */
export const MP4 = readFileSync(new URL("../../assets/sandbox/result.mp4", import.meta.url));

/** A manifest of `n` text-only actor-2 videos v1..vn, each with the text "text-vN". */
export function textManifest(n: number, name = "m"): string {
  const videos = Array.from(
    { length: n },
    (_, i) => `  - id: v${i + 1}\n    chunks:\n      - duration: 5\n        text: "text-v${i + 1}"\n`,
  );
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\n  aspectRatio: "16:9"\nvideos:\n${videos.join("")}`;
}
