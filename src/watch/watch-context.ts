// What the parts of a watch share, made once per watch by watchFolder (watch-folder.ts): the options,
// the engine, and what the watch remembers of the folder's files between their readings. Each part
// (manifest-reading.ts, watch-outputs.ts, folder-watcher.ts) is a set of functions of this context,
// and holds no state of its own.
import { DEFAULTS } from "../defaults.js";
import type { Engine, EngineOptions } from "../engine/engine.js";
import type { ProgressSink } from "../engine/progress.js";
import type { Job, LoadOptions } from "../manifest/index.js";
import type { ReportThrottle } from "../report/report-throttle.js";
import type { JobRow } from "../state/job-store.js";
import { shownPath } from "../user-path.js";
import type { RowsFiles } from "./rows-files.js";

export const DEFAULT_SETTLE_MS = DEFAULTS.settle.ms;
/** How often the watched folder is checked for having been deleted or replaced. */
export const FOLDER_CHECK_MS = 2_000;
/** How long a file that does not end with a line break may still be being written. */
export const INCOMPLETE_GRACE_MS = DEFAULTS.incompleteGrace.ms;

export interface WatchOptions extends Omit<
  EngineOptions,
  "onFatal" | "onJobChange" | "onStateFailure" | "progress"
> {
  /** The folder to watch (recursively). */
  readonly dir: string;
  readonly load: LoadOptions;
  readonly progress: ProgressSink;
  /** Where problems of invalid manifests are written (stderr). */
  readonly report: (text: string) => void;
  /** Whether problems get colour and code frames. @defaultValue false */
  readonly tty?: boolean;
  /**
   * How long a file must stay unchanged before it is read: long enough for scripts and copies that
   * write in bursts, short enough that a saved manifest starts within a second. A writer that pauses
   * longer mid-line gets INCOMPLETE_GRACE_MS more (see loadFile); one that pauses longer at a line
   * break gets its first lines read, and run if they are a valid manifest.
   * @defaultValue DEFAULTS.settle (700ms)
   */
  readonly settleMs?: number | undefined;
  /**
   * Why a valid manifest's jobs must not be sent (reported, and the manifest skipped until it or
   * the state changes), or undefined. The CLI refuses jobs already sent to another service.
   */
  readonly refuseJobs?: (jobs: readonly Job[]) => Promise<string | undefined>;
  /** Called once the initial scan is done and the watcher listens. */
  readonly onReady?: () => void;
  /** The service as index.html names it: "sandbox" or the base URL. @defaultValue not named */
  readonly service?: string;
}

/** How a watch ended: stopped by the user, or by its budget (its work in flight finished first). */
export interface WatchEnd {
  /** The rows of the jobs of the folder's manifests at the end (the budget's stop counts what is left). */
  readonly rows: readonly JobRow[];
  readonly capped: boolean;
}

export interface WatchContext {
  readonly options: WatchOptions;
  /** The watched folder, absolute. */
  readonly dir: string;
  readonly engine: Engine;
  readonly progress: ProgressSink;
  /** Rewrites results.jsonl and index.html after changes, however many: see report-throttle.ts. */
  readonly reports: ReportThrottle;
  readonly startedAt: Date;
  /** False once the watch ends: the last index.html stops reloading itself. */
  watching: boolean;
  /** The latest decision the outputs carry (see writeNewDecisions). */
  decisionsSeen: number;
  /** Manifest -> its retakes when last run (see runNewRetakes). */
  readonly retakesSeen: Map<string, string>;
  /** Manifest -> the counts last said of it, all final (see sayFinished). */
  readonly finishedSaid: Map<string, string>;
  /** File -> the manifest name it defines. */
  readonly nameOf: Map<string, string>;
  /** File -> the problems last printed for it. */
  readonly reported: Map<string, string>;
  /** File skipped for a name another file holds -> that name, lower case. */
  readonly clashes: Map<string, string>;
  /** One piece of work at a time per file (see schedule). */
  readonly queue: Map<string, Promise<void>>;
  /** Files read again once a writer that paused mid-line has had its grace. */
  readonly graceTimers: Set<NodeJS.Timeout>;
  /** Manifests skipped for a missing media file. */
  readonly awaitingMedia: Set<string>;
  /** The rows CSVs of the manifests: a manifest is read again when one changes. */
  readonly rowsFiles: RowsFiles;
}

/** `file` as the user named the folder: relative to where reel was started. */
export function display(ctx: WatchContext, file: string): string {
  return shownPath(ctx.options.load.cwd, file);
}

/** Runs `work` on `file` once the work on it under way is done: one piece at a time per file. */
export function schedule(ctx: WatchContext, file: string, work: () => Promise<void>): void {
  const previous = ctx.queue.get(file) ?? Promise.resolve();
  const next = previous
    .then(work)
    .catch((error: unknown) => ctx.options.report(`${display(ctx, file)}: ${(error as Error).message}\n`))
    .finally(() => {
      if (ctx.queue.get(file) === next) ctx.queue.delete(file);
    });
  ctx.queue.set(file, next);
}
