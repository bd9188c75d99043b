// What `run` and `watch` both set up before working, and take down after: a log file under the state
// folder (with the key scrubbed), the service (or the in-process sandbox), and the state file.
import { dirname, join, resolve } from "node:path";
import { type CachedHasher, makeCachedHasher } from "../engine/cached-file-hash.js";
import type { ClientOptions } from "../client/index.js";
import { type EngineOptions } from "../engine/engine.js";
import type { ProgressSink } from "../engine/progress.js";
import { makeHumanProgress, makeJsonProgress, teeProgress } from "../display/index.js";
import { coordinationOf, outageNote } from "../fleet/index.js";
import { sentElsewhereProblem } from "../engine/service-alias-check.js";
import { type Logger, makeLogger } from "../log/logger.js";
import { logFileName } from "../log/log-files.js";
import { EventStream } from "../events/stream.js";
import type { Job } from "../manifest/index.js";
import {
  earlierWork,
  listRecordedUnknown,
  lostStateMessage,
  recordedUnknownMessage,
  restoredJobOf,
} from "../output/recovery.js";
import { outFolderOf } from "../output/out-folder.js";
import { readRecords } from "../output/records.js";
import { leaseSetting } from "./lease-setting.js";
import { openJobStore, storeSecretValues } from "../state/open-job-store.js";
import { StateStore } from "../state/sqlite/store.js";
import type { JobStore } from "../state/job-store.js";
import { StateFileError } from "../errors/state.js";
import { formatDuration, parseDuration } from "../duration.js";
import { DEFAULTS } from "../defaults.js";
import { UsageError } from "../errors/usage.js";
import type { CliIO, ParsedArgs } from "./command.js";
import {
  type ConnectedService,
  connectService,
  positiveInteger,
  SANDBOX_SERVICE_ID,
  sandboxServiceId,
  type ServiceSettings,
} from "./service-options.js";
import { plural } from "../plural.js";
import { readMetricsAddress, startSessionMetrics } from "./metrics-options.js";
import type { ReelMetrics } from "../metrics/reel-metrics.js";
import { timedStore } from "../metrics/store-timing.js";
import { readNotifySettings } from "./notify-options.js";
import { openLogFile, pruneEarlierLogs } from "./session-log.js";
import type { Notifier } from "../notify/notifier.js";

export interface WorkSession {
  readonly logger: Logger;
  readonly logFile: string;
  readonly service: ConnectedService;
  readonly store: JobStore;
  readonly hasher: CachedHasher;
  readonly progress: ProgressSink;
  /**
   * The event stream (src/events): its bus to subscribe to, and where the command says how it ended
   * (`end`; a session that ends without saying is recorded as "error").
   */
  readonly events: EventStream;
  /** The engine options every working command shares. */
  readonly engine: Omit<EngineOptions, "onFatal" | "onJobChange">;
  /** --metrics: told the named budget the work spends from, if any. */
  readonly metrics?: Pick<ReelMetrics, "followBudget">;
}

/**
 * The client's retries, told to the user at most every RETRY_NOTE_MS: a service that does not answer
 * (down, unreachable, rate limiting) otherwise looks like a hang, with the reason only in the log.
 */
function retryNotes(progress: ProgressSink): NonNullable<ClientOptions["onRetry"]> {
  let last = 0;
  return ({ error, attempt, delayMs }) => {
    // The live display says each wait, with its countdown; the note is for logs, now and then.
    progress.event({ stage: "waiting", ms: delayMs, detail: `retrying: ${error.message}` });
    const now = Date.now();
    if (now - last < RETRY_NOTE_MS) return;
    last = now;
    progress.event({
      stage: "note",
      detail: `${error.message}: trying again in ${formatDuration(delayMs)} (attempt ${attempt + 1})`,
    });
  };
}

const RETRY_NOTE_MS = 15_000;

/**
 * Why `jobs` must not be sent now, or undefined: their records in OUT show them sent with a state
 * file this one is not; or some were already sent to another base URL (see service-alias-check.ts),
 * unless --new-service says to make them again (the sandbox is free: its work never counts there).
 */
export function refusalOf(
  settings: ServiceSettings,
  args: ParsedArgs,
  store: JobStore,
): (jobs: readonly Job[]) => Promise<string | undefined> {
  const checkServices = !settings.sandbox && args.values["new-service"] !== true;
  return async (jobs) => {
    // Jobs whose records in OUT show them paid with a state file this one is not (sandbox too: its
    // videos would overwrite those).
    const recorded = await listRecordedUnknown(store, jobs, settings.outDir);
    if (recorded.length > 0) return recordedUnknownMessage(settings.statePath, settings.outDir, recorded);
    return checkServices
      ? sentElsewhereProblem(store, jobs, settings.baseUrl!, [SANDBOX_SERVICE_ID])
      : undefined;
  };
}

/** --rebuild-state: the records in OUT written back into the state file, and said. */
async function rebuildState(store: JobStore, outDir: string, io: CliIO): Promise<void> {
  const restored = readRecords(outDir, store.journalScope).flatMap(
    (record) => restoredJobOf(record, outDir) ?? [],
  );
  const written = await store.restoreJobs(restored);
  // The folder's reports list these manifests again, as before the state was lost.
  for (const manifest of new Set(restored.map((job) => job.manifest))) {
    await store.recordOutManifest(outFolderOf(outDir).key, manifest);
  }
  await store.flush();
  const count = (state: string): number => restored.filter((job) => job.state === state).length;
  io.stderr.write(
    `reel: state rebuilt from the records in ${outDir}: ${plural(written, "job")} written (${count("Success")} done, ${count("submitted")} followed by task id, ${count("Fail") + count("Canceled")} failed, ${count("uncertain")} uncertain; jobs the state knew already were kept)\n`,
  );
}

/** Opens a session, runs `work` in it, and always closes the state, the service and the log. */
export async function withWorkSession<T>(
  kind: "run" | "watch",
  settings: ServiceSettings,
  args: ParsedArgs,
  io: CliIO,
  work: (session: WorkSession) => Promise<T>,
): Promise<T> {
  const maxAttemptsRaw = args.values["max-attempts"];
  const maxAttempts =
    typeof maxAttemptsRaw === "string"
      ? positiveInteger("--max-attempts", maxAttemptsRaw)
      : DEFAULTS.maxAttempts;
  const deadlineRaw = args.values["poll-deadline"];
  const pollDeadlineMs =
    typeof deadlineRaw === "string" ? parseDuration(deadlineRaw) : DEFAULTS.pollDeadline.ms;
  if (pollDeadlineMs === undefined) {
    throw new UsageError(
      `expected --poll-deadline to be a duration such as 90s, 30m, 6h or 2d, got '${String(deadlineRaw)}'`,
    );
  }
  const metricsAddress = readMetricsAddress(args);
  // Before anything is opened: a refused notify: URL is exit 2 with nothing sent.
  const notifySettings = await readNotifySettings(args, io, settings);
  const stateDir = dirname(settings.statePath);
  const logFile = join(stateDir, "logs", logFileName(kind, new Date(), process.pid));
  const logger = makeLogger({
    level: "debug",
    // The store URL's secrets are secrets like the key (a pg error could quote the URL).
    secrets: [settings.apiKey, ...storeSecretValues(settings.storeUrl)].filter(
      (secret): secret is string => secret !== undefined && secret !== "",
    ),
    destination: openLogFile(logFile, io.env),
  });
  // The state file first: its lock is what tells a second reel on it to wait, before the sandbox
  // (whose data sits beside it) would refuse it with a message about the sandbox instead.
  const rebuild = args.values["rebuild-state"] === true;
  if (rebuild && settings.storeUrl !== undefined) {
    throw new UsageError(
      "--rebuild-state rebuilds a SQLite state file; a PostgreSQL store is not lost with a file",
    );
  }
  const serviceId = settings.sandbox ? sandboxServiceId(settings.storeUrl) : settings.baseUrl!;
  // Before the store: a port in use is said before anything is opened or sent.
  const metrics =
    metricsAddress && (await startSessionMetrics(kind, metricsAddress, settings, args, io, logger));
  const openedStore = await openJobStore(
    settings.statePath,
    {
      baseUrl: serviceId,
      concurrency: settings.concurrency,
      ...(settings.storeUrl !== undefined ? { lease: leaseSetting(io.env) } : {}),
      // Before the progress display exists: a plain line (the engine says later outages itself).
      onOutage: (event) => {
        if (event.state === "down")
          logger.warn({ err: event.error }, "store unreachable at start: waiting for it");
        else logger.info({ downMs: Math.round(event.downMs) }, "store reachable again");
        io.stderr.write(`reel: ${outageNote(event)}\n`);
      },
      // One address of the service in use at a time (see state/service-address.ts), unless the user
      // says this one is another service; the sandbox's work is free, and blocks nothing.
      ...(settings.sandbox || args.values["new-service"] === true
        ? {}
        : { exclusiveAddress: { free: [SANDBOX_SERVICE_ID] } }),
      whenNew: (how) => {
        if (rebuild) return;
        // An emptied file is never new beside records; a missing one may be (a new --state beside an
        // output folder another state file fills), unless logs or journal lines of its own are there.
        const scope = StateStore.journalScopeOf(settings.statePath, serviceId);
        const evidence = earlierWork(settings.statePath, settings.outDir, logFile, how === "empty", scope);
        if (evidence) throw new StateFileError(lostStateMessage(settings.statePath, how, evidence));
      },
    },
    settings.storeUrl,
  ).catch(async (error: unknown) => {
    await metrics?.close();
    throw error;
  });
  const store = metrics ? timedStore(openedStore, metrics.observeStoreCall) : openedStore;
  // Alone on a state file, or one runner of a fleet on a shared store: chosen once, here.
  const coordination = coordinationOf(store);
  pruneEarlierLogs(logFile, logger);
  let service: ConnectedService | undefined;
  let events: EventStream | undefined;
  let stopFleetView: (() => void) | undefined;
  let notifier: Notifier | undefined;
  let failure: unknown;
  try {
    if (rebuild) await rebuildState(store, settings.outDir, io);
    const eventsFile = args.values.events;
    events = await EventStream.open(openedStore, {
      command: kind,
      ...(typeof eventsFile === "string" ? { file: resolve(io.cwd, eventsFile) } : {}),
      warn: (line) => io.stderr.write(`reel ${kind}: ${line}\n`),
    });
    if (notifySettings) {
      // Loaded only when asked for, as the metrics are.
      const { Notifier } = await import("../notify/notifier.js");
      notifier = new Notifier({
        command: kind,
        targets: notifySettings.targets,
        ...(notifySettings.secret !== undefined && { secret: notifySettings.secret }),
        secrets: [
          settings.apiKey ?? "",
          ...storeSecretValues(settings.storeUrl),
          io.env.PGPASSWORD ?? "",
          notifySettings.secret ?? "",
        ],
        ...(notifySettings.onEnd !== undefined && {
          onEnd: { command: notifySettings.onEnd, env: io.env, cwd: io.cwd },
        }),
        outDir: settings.outDir,
        warn: (line) => io.stderr.write(`reel ${kind}: ${line}\n`),
        log: (line) => logger.warn(line),
        output: io.stderr,
      });
      notifier.listen(events.bus);
    }
    const human = await makeHumanProgress(io, {
      concurrency: settings.concurrency,
      watching: kind === "watch",
      noColor: args.values["no-color"] === true,
    });
    // `run --json` prints one document at its end; a watch never ends, so its events are the output.
    const shown = kind === "watch" && settings.json ? teeProgress(human, makeJsonProgress(io.stdout)) : human;
    const recorded = teeProgress(shown, events.recorder);
    const progress = metrics ? teeProgress(recorded, metrics.progress) : recorded;
    const notes = retryNotes(progress);
    service = await connectService(
      settings,
      logger,
      metrics
        ? (retry) => {
            metrics.onRetry(retry);
            notes(retry);
          }
        : notes,
      metrics?.onAnswer,
    );
    // A fleet's runner on a terminal: its display says what the whole fleet does.
    if (io.stderr.isTTY === true) stopFleetView = coordination.showFleet(human);
    const result = await work({
      logger,
      logFile,
      service,
      store,
      hasher: makeCachedHasher(store, progress),
      progress,
      events,
      ...(metrics && { metrics }),
      engine: {
        client: service.client,
        store,
        coordination,
        outDir: settings.outDir,
        cacheDir: join(stateDir, "cache"),
        allowPrivateSources: args.values["allow-private-sources"] === true,
        concurrency: settings.concurrency,
        retryFailed: args.values["retry-failed"] === true,
        resubmitUncertain: args.values["resubmit-uncertain"] === true,
        maxAttempts,
        pollDeadlineMs,
        httpOrigins: service.httpOrigins,
        dispatcher: service.dispatcher,
        cwd: io.cwd,
        pollTiming: service.polling.timing,
        pollsPerSecond: service.polling.perSecond,
        logger,
        progress,
        signal: io.signal,
      },
    });
    // Ended by itself (not stopped): Prometheus is given the time to read the final counts.
    await metrics?.finish(io.signal);
    return result;
  } catch (error) {
    events?.end(io.signal.aborted ? "interrupted" : "error");
    failure = error;
    throw error;
  } finally {
    stopFleetView?.();
    try {
      events?.end("error"); // said by the command when it ended as it meant to
      await events?.close();
    } catch {
      // The stream is the store's: a store that cannot be written says so as it closes, below.
    }
    // After the stream's last events: the run's end is among them (or, the store gone, told as said).
    await notifier?.close(events?.endedAs, failure);
    try {
      await openedStore.close(); // throws if the state file could not be written: the user must hear of it
    } finally {
      await service?.close();
      await metrics?.close();
      logger.flush();
    }
  }
}
