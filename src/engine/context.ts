// What the parts of the engine share, made once per engine by makeEngine (engine.ts): the options as
// given and as resolved, the state file, the client, the queues, the stop signals, the service gate
// and the set of wanted jobs. Each part (submit.ts, follow.ts, deliver.ts, lost-assets.ts) is a set
// of functions of this context, and holds no state of its own.
import type PQueue from "p-queue";
import type { Budget } from "../budget/index.js";
import type { ServiceClient } from "../client/index.js";
import type { OutputDiskError } from "../errors/output.js";
import type { Dispatcher } from "undici";
import type { Coordination, Coordinator } from "../fleet/index.js";
import type { Logger } from "../log/logger.js";
import type { Job } from "../manifest/index.js";
import type { JournalWriter } from "../output/journal.js";
import type { OutFolder } from "../output/out-folder.js";
import type { VersionsContext } from "../output/versions.js";
import type { JobRow, JobStore } from "../state/job-store.js";
import type { StateFileError } from "../errors/state.js";
import type { AssetResolver } from "./assets.js";
import type { KeyedLock } from "../keyed-lock.js";
import type { PollTiming } from "./poll-schedule.js";
import type { RunTimes } from "./run-times.js";
import type { ProgressSink } from "./progress.js";
import type { ServiceGate } from "./service-gate.js";
import type { StopSignals } from "./stop-signals.js";

export interface EngineOptions {
  readonly client: ServiceClient;
  readonly store: JobStore;
  /**
   * How this runner shares the store's work with others (solo or fleet: src/fleet/).
   * @defaultValue chosen from the store (coordinationOf)
   */
  readonly coordination?: Coordination;
  readonly outDir: string;
  /** Remote sources are fetched here before upload. */
  readonly cacheDir: string;
  /** Fetch https sources from loopback, link-local and private addresses too. @defaultValue false */
  readonly allowPrivateSources?: boolean;
  /** Generations unfinished (submitted, not final) at once. @defaultValue 4 */
  readonly concurrency?: number;
  /** Resubmit jobs that ended Fail or Canceled (a new attempt, counted). @defaultValue false */
  readonly retryFailed?: boolean;
  /** Resubmit jobs whose submission outcome is unknown. @defaultValue false */
  readonly resubmitUncertain?: boolean;
  /** Attempts per job in all, for --retry-failed. @defaultValue 3 */
  readonly maxAttempts?: number;
  readonly pollTiming?: PollTiming;
  /** Global cap on status polls per second, all tasks together. @defaultValue 20 */
  readonly pollsPerSecond?: number;
  /** Stop following a task after this long (its id is kept; a rerun goes on). @defaultValue 24 h */
  readonly pollDeadlineMs?: number;
  /** @defaultValue 4 */
  readonly uploadConcurrency?: number;
  /** @defaultValue 4 */
  readonly downloadConcurrency?: number;
  /** Origins whose result videos may be fetched over plain http (the sandbox). */
  readonly httpOrigins?: readonly string[];
  /**
   * The session's HTTP dispatcher (the client's): downloads go through it. Remote sources keep a
   * guarded one per fetch, which checks each address it connects to (see source-address.ts).
   * @defaultValue the client's
   */
  readonly dispatcher?: Dispatcher;
  /** The folder reel was started in: progress notes name files relative to it. Without it, whole. */
  readonly cwd?: string;
  readonly logger?: Logger;
  readonly progress?: ProgressSink;
  /** Aborted on Ctrl-C / SIGTERM: stop starting work, record what is in hand, return quickly. */
  readonly signal?: AbortSignal;
  /**
   * What a rejected key or exhausted credits do: "stop" ends all work (a one-shot run exits 3);
   * "pause" holds every call to the service, checks again with backoff, and goes on when the
   * condition clears (watch mode). @defaultValue "stop"
   */
  readonly onFatal?: "stop" | "pause";
  /**
   * A capped run's budget (--max-seconds, --max-credits): every submission and speech call is
   * counted against it first, and none is made past it (see src/budget).
   */
  readonly budget?: Budget;
  /** Called once if the budget stops the work: nothing more is sent; what is in flight goes on. */
  readonly onBudgetStop?: () => void;
  /** Called after each job changes in a way results.jsonl shows (watch mode rewrites it). */
  readonly onJobChange?: () => void;
  /**
   * Called once if the state file, or the disk of the output folder, can no longer be written: the
   * engine has stopped all work.
   */
  readonly onStateFailure?: (error: StateFileError | OutputDiskError) => void;
}

/** The options the parts read, with their defaults applied. */
export interface ResolvedOptions {
  readonly maxAttempts: number;
  readonly pollTiming: PollTiming;
  readonly pollDeadlineMs: number;
  readonly onFatal: "stop" | "pause";
  readonly retryFailed: boolean;
  readonly resubmitUncertain: boolean;
  readonly httpOrigins: readonly string[];
  readonly dispatcher: Dispatcher;
}

/** The engine's queues: each bounds one kind of work (see makeEngine for their sizes). */
export interface EngineQueues {
  /** Generations unfinished at once: a submission and the following of its task hold one. */
  readonly slots: PQueue;
  readonly transfers: PQueue;
  readonly downloads: PQueue;
  /** Jobs admitted to work (see makeEngine). */
  readonly admission: PQueue;
  /** Jobs already done, whose files are only checked. */
  readonly checks: PQueue;
  /** Status polls per second, all tasks together. */
  readonly polls: PQueue;
}

/** The jobs the manifests ask for now: one version (spec hash) per job key. */
export interface WantedJobs {
  isWanted(job: Job): boolean;
  /** A version of a video whose manifest now asks for another: its files carry its hash. */
  isSuperseded(row: JobRow): boolean;
}

export interface EngineContext {
  readonly client: ServiceClient;
  readonly store: JobStore;
  readonly outDir: string;
  /** `outDir` as the state file names it, and which rows' videos lie in it. */
  readonly out: OutFolder;
  /** The output folder and state file, for the functions that keep versions of a video. */
  readonly versions: VersionsContext;
  readonly options: ResolvedOptions;
  readonly log: Logger;
  readonly progress: ProgressSink;
  readonly queues: EngineQueues;
  readonly signals: StopSignals;
  readonly gate: ServiceGate;
  readonly wanted: WantedJobs;
  readonly resolver: AssetResolver;
  readonly journal: JournalWriter;
  /** What the engine learned (and was given from the store) of the service's run times. */
  readonly runTimes: RunTimes;
  /** Asset ids this engine found deleted on the service: no submission may use them any more. */
  readonly lostAssets: Set<string>;
  /** What this run asks of the other runners of the store, if any (see src/fleet/coordination.ts). */
  readonly coordinator: Coordinator;
  /** A capped run's budget (see EngineOptions.budget). */
  readonly budget: Budget | undefined;
  /** Jobs --retry-failed has resubmitted in this run (per watch session). */
  readonly retried: Set<number>;
  /**
   * Keys of the jobs claimed whose submission is not answered yet: their "submitted" line is still
   * to come (a capped run names them when its budget stops).
   */
  readonly sending: Set<string>;
  /**
   * Per job key: what reads the store to choose a video's file and then moves files and records
   * them (a download into `<id>.mp4`, an older version moved aside, a name taken back) runs one
   * section at a time, so no two versions of one video act on one read (see deliver.ts).
   */
  readonly videoLock: KeyedLock;
  /** A job changed in a way results.jsonl shows. */
  changed(): void;
}

/** Queue priority of tasks already on the service: they go before any new submission. */
export const IN_FLIGHT = Number.MAX_SAFE_INTEGER;
