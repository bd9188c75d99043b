// The /metrics endpoint of `run` and `watch --metrics [HOST:]PORT`: Prometheus' text format, on
// 127.0.0.1 unless another host is given, and a host beyond this machine only with --metrics-public
// (the metrics name the service's address and the runner's host; nothing more, but not for anyone on
// the network unasked). It also knows when it was scraped: a run that ends waits for one more scrape
// (see awaitFinalScrape), so Prometheus sees its final counts.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { UsageError } from "../errors/usage.js";

export interface MetricsAddress {
  /** As listen() takes it (an IPv6 address without brackets). */
  readonly host: string;
  /** 0: any free port (the address line says which). */
  readonly port: number;
}

export const DEFAULT_METRICS_HOST = "127.0.0.1";

/** The longest a run waits, at its end, for the last scrape. */
const FINAL_SCRAPE_MAX_MS = 60_000;

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d+){3}$/.test(host);
}

/**
 * `--metrics [HOST:]PORT` read and checked: a port alone listens on 127.0.0.1; a host beyond this
 * machine needs `public` (--metrics-public).
 */
export function parseMetricsAddress(raw: string, allowPublic: boolean): MetricsAddress {
  const match = /^(?:(\[[^\]]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(raw.trim());
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || !(port >= 0 && port <= 65535)) {
    throw new UsageError(
      `expected --metrics to be [HOST:]PORT, such as 9464, 127.0.0.1:9464 or [::1]:9464, got '${raw}'`,
    );
  }
  const host = match[1] === undefined ? DEFAULT_METRICS_HOST : match[1].replace(/^\[(.*)\]$/, "$1");
  if (!allowPublic && !isLoopbackHost(host)) {
    throw new UsageError(
      `--metrics ${raw} would serve the metrics beyond this machine; add --metrics-public to mean it (behind a firewall or a scraper's network), or give a port alone to serve on ${DEFAULT_METRICS_HOST}`,
    );
  }
  return { host, port };
}

export interface MetricsServer {
  /** http://HOST:PORT/metrics, the port as bound. */
  readonly url: string;
  /**
   * Waits for one more scrape, when Prometheus scrapes this endpoint (seen scraped twice): at most
   * the interval seen between scrapes, with a margin, and never past FINAL_SCRAPE_MAX_MS or `signal`.
   * Resolves at once when nothing scrapes it. Returns how long it may wait (0: it does not).
   */
  awaitFinalScrape(signal: AbortSignal, onWait?: (ms: number) => void): Promise<void>;
  close(): Promise<void>;
}

export async function startMetricsServer(
  address: MetricsAddress,
  registry: Registry,
): Promise<MetricsServer> {
  const scrapes: number[] = [];
  let nextScrape: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("reel serves /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": registry.contentType }).end(req.method === "HEAD" ? "" : text);
        scrapes.push(Date.now());
        if (scrapes.length > 2) scrapes.shift();
        res.once("finish", () => nextScrape?.());
      },
      (error: Error) => {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`${error.message}\n`);
      },
    );
  });
  // The endpoint must not keep a process up that is done: keep-alive connections are closed with it.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const shown = address.host.includes(":")
        ? `[${address.host}]:${address.port}`
        : `${address.host}:${address.port}`;
      const why =
        error.code === "EADDRINUSE"
          ? "the port is in use (another reel, or another exporter?): give another port"
          : error.code === "EADDRNOTAVAIL"
            ? "no interface of this machine has that address"
            : error.code === "EACCES"
              ? "not allowed (ports below 1024 need privileges): give a port from 1024 up"
              : error.message;
      reject(new UsageError(`cannot serve --metrics on ${shown}: ${why}`));
    });
    server.listen(address.port, address.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}/metrics`,
    async awaitFinalScrape(signal, onWait) {
      if (scrapes.length < 2 || signal.aborted) return;
      const interval = scrapes[1]! - scrapes[0]!;
      const ms = Math.min(FINAL_SCRAPE_MAX_MS, Math.round(interval * 1.5) + 1_000);
      onWait?.(ms);
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          nextScrape = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener("abort", done, { once: true });
        nextScrape = done;
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
