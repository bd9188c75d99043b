// `reel watch DIR`: run what lands in a folder of manifests until SIGINT/SIGTERM (exit 0).
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { pino } from "pino";
import { makeCachedHasher } from "../engine/hash-file.js";
import { makeLineProgress, makeTtyProgress } from "../engine/progress.js";
import { UsageError } from "../errors.js";
import { makeLogger } from "../log/logger.js";
import { StateStore } from "../state/store.js";
import { watchFolder } from "../watch/watch-folder.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import {
  connectService,
  positiveInteger,
  readServiceSettings,
  SERVICE_OPTIONS,
  SERVICE_USAGE,
} from "./service-options.js";

const USAGE = `Usage: reel watch DIR [options]

Runs every manifest (*.yaml, *.yml, in DIR and below) as it lands or changes: new and changed
videos are submitted, unchanged ones are left alone, videos removed before they were submitted
are dropped. Invalid manifests are reported and skipped until fixed. A rejected key or exhausted
credits pause the work (checked again with backoff) instead of stopping it. Ctrl-C stops cleanly;
starting again resumes, including manifests that changed meanwhile.

Options:
  --retry-failed         resubmit jobs that ended Fail or Canceled (a new, counted attempt)
  --max-attempts N       attempts per job in all, for --retry-failed (default 3)
  --resubmit-uncertain   resubmit jobs whose submission outcome is unknown (may pay twice)
  --allow-read DIR       let manifests read files under DIR too (repeatable)
${SERVICE_USAGE}`;

export const watchCommand: Command = {
  name: "watch",
  summary: "run the manifests of a folder as they land or change, until stopped",
  usage: USAGE,
  options: {
    ...SERVICE_OPTIONS,
    "retry-failed": { type: "boolean" },
    "max-attempts": { type: "string" },
    "resubmit-uncertain": { type: "boolean" },
    "allow-read": { type: "string", multiple: true },
  },
  run: runWatch,
};

async function runWatch(args: ParsedArgs, io: CliIO): Promise<number> {
  const settings = readServiceSettings(args, io, true);
  if (args.positionals.length !== 1) throw new UsageError("give exactly one folder to watch");
  const maxAttemptsRaw = args.values["max-attempts"];
  const maxAttempts =
    typeof maxAttemptsRaw === "string" ? positiveInteger("--max-attempts", maxAttemptsRaw) : 3;
  const allowRead = (args.values["allow-read"] as string[] | undefined) ?? [];
  const stateDir = dirname(settings.statePath);
  mkdirSync(join(stateDir, "logs"), { recursive: true });
  const logFile = join(stateDir, "logs", `watch-${new Date().toISOString().replace(/[:.]/g, "-")}.log`);
  const secrets = settings.apiKey ? [settings.apiKey] : [];
  const logger = makeLogger({
    level: "debug",
    secrets,
    destination: pino.destination({ dest: logFile, sync: false }),
  });
  const service = await connectService(settings, logger);
  let store: StateStore | undefined;
  try {
    store = StateStore.open(settings.statePath, { baseUrl: service.baseUrl });
    const progress = io.stderr.isTTY ? makeTtyProgress(io.stderr) : makeLineProgress(io.stderr);
    await watchFolder({
      dir: args.positionals[0]!,
      load: { cwd: io.cwd, allowRead, hashFile: makeCachedHasher(store) },
      client: service.client,
      store,
      outDir: settings.outDir,
      cacheDir: join(stateDir, "cache"),
      concurrency: settings.concurrency,
      retryFailed: args.values["retry-failed"] === true,
      resubmitUncertain: args.values["resubmit-uncertain"] === true,
      maxAttempts,
      httpOrigins: service.httpOrigins,
      pollTiming: service.polling.timing,
      pollsPerSecond: service.polling.perSecond,
      logger,
      progress,
      report: (text) => io.stderr.write(text),
      tty: io.stderr.isTTY === true,
      signal: io.signal,
    });
    io.stderr.write(
      "reel watch: stopped. Tasks already submitted keep running; start again to follow them.\n",
    );
    return EXIT.ok;
  } finally {
    store?.close();
    await service.close();
    logger.flush();
  }
}
