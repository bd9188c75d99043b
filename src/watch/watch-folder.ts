// `reel watch DIR`: one engine (one state file, one concurrency limit) for every manifest that lands
// in a folder, for days on end. chokidar reports files only once they stopped changing for a while
// (its awaitWriteFinish, `settleMs`), so a file being written is not read. It relies on the OS's
// file events: an idle watcher makes one system call every few seconds (FOLDER_CHECK_MS).
// The parts share a WatchContext (watch-context.ts): the folder's files (folder-watcher.ts), their
// readings (manifest-reading.ts), and the reports (watch-outputs.ts).
import { resolve } from "node:path";
import { makeEngine } from "../engine/engine.js";
import type { OutputDiskError } from "../errors/output.js";
import { ReportThrottle } from "../report/report-throttle.js";
import type { StateFileError } from "../errors/state.js";
import { watchFiles } from "./folder-watcher.js";
import { reread } from "./manifest-reading.js";
import { RowsFiles } from "./rows-files.js";
import { DEFAULT_SETTLE_MS, type WatchContext, type WatchEnd, type WatchOptions } from "./watch-context.js";
import { writeOutputs } from "./watch-outputs.js";

export type { WatchEnd, WatchOptions } from "./watch-context.js";

/** Runs until `signal` is aborted, or the budget stops the work; resolves after a clean stop. */
export async function watchFolder(options: WatchOptions): Promise<WatchEnd> {
  const { progress } = options;
  const dir = resolve(options.load.cwd, options.dir);
  // The live display runs from here to the end; its manifests come as they are read.
  progress.start(0, 0);
  try {
    return await watchWithProgress(options, dir);
  } finally {
    progress.stop();
  }
}

async function watchWithProgress(options: WatchOptions, dir: string): Promise<WatchEnd> {
  const startedAt = new Date();
  const { progress } = options;
  // The watch ends on the user's signal, when the state file or the output disk can no longer be
  // written, or when its budget stops the work (what is in flight finishes first).
  let stateFailure: StateFileError | OutputDiskError | undefined;
  let capped = false;
  let endWatch: () => void = () => {};
  const ended = new Promise<void>((resolveEnd) => {
    endWatch = resolveEnd;
  });
  // The reports are written (and the rows files read) once the context below is made.
  const reports = new ReportThrottle(() => writeOutputs(ctx));
  const engine = await makeEngine({
    ...options,
    progress,
    onFatal: "pause",
    onStateFailure: (error) => {
      stateFailure = error;
      endWatch();
    },
    onBudgetStop: () => {
      capped = true;
      endWatch();
    },
    onJobChange: () => reports.changed(),
  });
  const ctx: WatchContext = {
    options,
    dir,
    engine,
    progress,
    reports,
    startedAt,
    watching: true,
    decisionsSeen: 0,
    retakesSeen: new Map(),
    finishedSaid: new Map(),
    nameOf: new Map(),
    reported: new Map(),
    clashes: new Map(),
    queue: new Map(),
    graceTimers: new Set(),
    awaitingMedia: new Set(),
    // A manifest is read again when its rows CSV changes, as when it changes itself.
    rowsFiles: new RowsFiles(options.settleMs ?? DEFAULT_SETTLE_MS, (manifests) => {
      for (const file of manifests) reread(ctx, file);
    }),
  };
  await engine.followInFlight();

  const files = await watchFiles(ctx);
  if (options.signal?.aborted) endWatch();
  options.signal?.addEventListener("abort", () => endWatch(), { once: true });
  await ended;
  for (const timer of ctx.graceTimers) clearTimeout(timer);
  await files.stop();
  await ctx.rowsFiles.close();
  await Promise.all([...ctx.queue.values()]);
  await engine.whenIdle();
  await engine.dispose();
  // No write of a watching page may land after the last one.
  await reports.stop();
  if (stateFailure) throw stateFailure;
  ctx.watching = false;
  await writeOutputs(ctx);
  return { rows: await engine.wantedRows(), capped };
}
