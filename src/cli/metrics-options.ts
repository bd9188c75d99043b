// --metrics [HOST:]PORT and --metrics-public of `run` and `watch`: the metrics endpoint for Prometheus
// (src/metrics/), set up and taken down with the work session.
import { hostname } from "node:os";
import type { Logger } from "../log/logger.js";
import type { ReelMetrics } from "../metrics/reel-metrics.js";
import { type MetricsAddress, parseMetricsAddress, startMetricsServer } from "../metrics/metrics-server.js";
import { findPriceTable, type PriceTable } from "../prices/index.js";
import { UsageError } from "../errors/usage.js";
import type { CliIO, OptionsConfig, ParsedArgs } from "./command.js";
import { flagValue } from "./workplace.js";
import { envSetting, SANDBOX_SERVICE_ID, type ServiceSettings } from "./service-options.js";

export const METRICS_OPTIONS: OptionsConfig = {
  metrics: { type: "string" },
  "metrics-public": { type: "boolean" },
};

export const METRICS_USAGE = `  --metrics [HOST:]PORT  serve Prometheus metrics at http://HOST:PORT/metrics (HOST 127.0.0.1 unless
                         given; port 0: any free one, said at the start). See docs/operations.md
  --metrics-public       let --metrics listen on an address beyond this machine (0.0.0.0, a LAN
                         address): refused without it`;

/** The address of --metrics, checked before anything starts; undefined without the flag. */
export function readMetricsAddress(args: ParsedArgs): MetricsAddress | undefined {
  const raw = flagValue(args.values, "metrics");
  const allowPublic = args.values["metrics-public"] === true;
  if (raw === undefined) {
    if (allowPublic) throw new UsageError("--metrics-public only applies with --metrics [HOST:]PORT");
    return undefined;
  }
  return parseMetricsAddress(raw, allowPublic);
}

export interface SessionMetrics extends ReelMetrics {
  readonly url: string;
  /** A run's end: one more scrape waited for, when something scrapes (see awaitFinalScrape). */
  finish(signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * The price list for the credits counted, as a capped run finds it; a list that cannot be read is
 * left out (logged): metrics never stop a run.
 */
function pricesFor(
  args: ParsedArgs,
  io: CliIO,
  settings: ServiceSettings,
  logger: Logger,
): PriceTable | undefined {
  try {
    return findPriceTable({
      given: typeof args.values.prices === "string" ? args.values.prices : envSetting(io.env, "REEL_PRICES"),
      anchorDir: settings.place.anchor.dir,
      cwd: io.cwd,
    });
  } catch (error) {
    logger.warn(
      { err: (error as Error).message },
      "metrics: no credits counted, the price list cannot be read",
    );
    return undefined;
  }
}

/** Starts the endpoint of `address` and says where it serves. */
export async function startSessionMetrics(
  kind: "run" | "watch",
  address: MetricsAddress,
  settings: ServiceSettings,
  args: ParsedArgs,
  io: CliIO,
  logger: Logger,
): Promise<SessionMetrics> {
  // Loaded only when asked for: prom-client is no part of a run's start otherwise.
  const { makeReelMetrics } = await import("../metrics/reel-metrics.js");
  const metrics = makeReelMetrics({
    identity: {
      command: kind,
      host: hostname(),
      pid: process.pid,
      service: settings.sandbox ? SANDBOX_SERVICE_ID : settings.baseUrl!,
      store: settings.storeUrl === undefined ? "sqlite" : "postgresql",
    },
    concurrency: settings.concurrency,
    prices: pricesFor(args, io, settings, logger),
  });
  const server = await startMetricsServer(address, metrics.registry);
  io.stderr.write(`reel ${kind}: metrics at ${server.url}\n`);
  return {
    ...metrics,
    url: server.url,
    finish: (signal) =>
      server.awaitFinalScrape(signal, (ms) =>
        io.stderr.write(
          `reel ${kind}: waiting up to ${Math.ceil(ms / 1000)} s for the last scrape of the metrics\n`,
        ),
      ),
    close: () => server.close(),
  };
}
