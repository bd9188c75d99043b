// The context the parts of one engine share (context.ts), made from its options with their
// defaults: the queues and their sizes, the service gate, the asset resolver, what was learned of
// the run times. Also what is said when a capped run's budget stops the work.
import PQueue from "p-queue";
import { DEFAULTS } from "../defaults.js";
import type { Coordinator } from "../fleet/index.js";
import type { Logger } from "../log/logger.js";
import type { JournalWriter } from "../output/journal.js";
import { outFolderOf } from "../output/out-folder.js";
import { shownPath } from "../user-path.js";
import { makeAssetResolver, speechAsset } from "./assets.js";
import type { EngineContext, EngineOptions, WantedJobs } from "./context.js";
import { makeKeyedLock } from "../keyed-lock.js";
import { DEFAULT_POLL_TIMING } from "./poll-schedule.js";
import type { ProgressSink } from "./progress.js";
import { RunTimes } from "./run-times.js";
import { ServiceGate } from "./service-gate.js";
import type { StopSignals } from "./stop-signals.js";

/** What makeEngine made before the context: its parts are shared by it. */
export interface ContextParts {
  readonly log: Logger;
  readonly progress: ProgressSink;
  readonly signals: StopSignals;
  readonly coordinator: Coordinator;
  readonly journal: JournalWriter;
  readonly wanted: WantedJobs;
}

export async function buildContext(options: EngineOptions, parts: ContextParts): Promise<EngineContext> {
  const { client, store, outDir } = options;
  const { log, progress, signals, coordinator, journal, wanted } = parts;
  const { stop } = signals;
  const out = outFolderOf(outDir);
  const onFatal = options.onFatal ?? "stop";
  const concurrency = options.concurrency ?? DEFAULTS.concurrency;
  const downloadConcurrency = options.downloadConcurrency ?? DEFAULTS.downloadConcurrency;
  const transfers = new PQueue({ concurrency: options.uploadConcurrency ?? DEFAULTS.uploadConcurrency });
  const queues = {
    slots: new PQueue({ concurrency }),
    transfers,
    downloads: new PQueue({ concurrency: downloadConcurrency }),
    // Jobs are admitted to work a few at a time, longest first (see admit: those waiting are a small
    // entry each in a backlog). Enough are admitted to keep every generation slot and download busy,
    // with a generation's worth more ready to submit.
    admission: new PQueue({ concurrency: 2 * concurrency + downloadConcurrency + 16 }),
    // Jobs already done only need their files checked: a lane of their own, so 10,000 checks at the
    // start of a rerun never delay the first submission.
    checks: new PQueue({ concurrency: 16 }),
    polls: new PQueue({ intervalCap: options.pollsPerSecond ?? DEFAULTS.polling.perSecond, interval: 1_000 }),
  };

  return {
    client,
    store,
    outDir,
    out,
    versions: { store, outDir, out },
    options: {
      maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts,
      pollTiming: options.pollTiming ?? DEFAULT_POLL_TIMING,
      pollDeadlineMs: options.pollDeadlineMs ?? DEFAULTS.pollDeadline.ms,
      onFatal,
      retryFailed: options.retryFailed ?? false,
      resubmitUncertain: options.resubmitUncertain ?? false,
      httpOrigins: options.httpOrigins ?? [],
      dispatcher: options.dispatcher ?? client.dispatcher,
    },
    log,
    progress,
    queues,
    signals,
    gate: new ServiceGate({ client, log, progress, onFatal, stop, sleep: signals.sleep }),
    wanted,
    resolver: makeAssetResolver({
      client,
      store,
      intents: coordinator,
      queue: transfers,
      cacheDir: options.cacheDir,
      allowPrivateSources: options.allowPrivateSources ?? false,
      budget: options.budget,
      resubmitUncertain: options.resubmitUncertain ?? false,
      signal: stop.signal,
      costedSignal: signals.costed,
      progress,
      // Named as the manifest names them; the hash tells apart two files of one name.
      onUpload: (source, sha) =>
        progress.event({
          stage: "uploaded",
          asset: sha,
          detail: `${shownPath(options.cwd, source)} (sha256 ${sha.slice(0, 12)})`,
        }),
      onSpeech: (voice, text) =>
        progress.event({
          stage: "speech",
          asset: speechAsset(voice, text),
          detail: `voice ${voice}: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text)}`,
        }),
    }),
    journal,
    runTimes: RunTimes.fromJSON(await store.readRunTimes()),
    lostAssets: new Set(),
    retried: new Set(),
    sending: new Set(),
    coordinator,
    budget: options.budget,
    videoLock: makeKeyedLock(),
    changed: () => options.onJobChange?.(),
  };
}

/**
 * The cap reached: said once; the jobs not sent yet stay pending, and what is in flight goes on.
 * Submissions claimed within the cap before it and not answered yet are named: their lines follow.
 */
export function sayBudgetStop(ctx: EngineContext, onBudgetStop: (() => void) | undefined): void {
  const { log, progress } = ctx;
  ctx.budget?.onStop((reached) => {
    const sending = [...ctx.sending];
    log.warn(
      { what: reached.what, spent: reached.spent, sending },
      "budget reached: nothing more is submitted",
    );
    const onTheirWay =
      sending.length > 0
        ? ` after ${sending.join(", ")} (claimed within the cap, their requests on their way)`
        : "";
    progress.event({
      stage: "note",
      detail: `budget reached: ${reached.unpriced ? `${reached.what} has no price in the price list` : `${reached.what} would pass ${reached.shared ? `the budget '${reached.shared.name}'` : "the cap"}`}; nothing more is submitted${onTheirWay}; tasks already submitted are followed and downloaded`,
    });
    onBudgetStop?.();
  });
}
