// `reel watch DIR`: one engine (one state file, one concurrency limit) for every manifest that lands
// in a folder, for days on end. chokidar reports files only once they stopped changing for a while
// (its awaitWriteFinish, `settleMs`), so a file being written is not read. It relies on the OS's
// file events: an idle watcher makes one system call every few seconds (FOLDER_CHECK_MS).
import type { Stats } from "node:fs";
import { open, realpath, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { makeEngine, type EngineOptions } from "../engine/engine.js";
import type { ProgressSink } from "../engine/progress.js";
import {
  formatProblems,
  mergeFindings,
  isManifestFile,
  type Job,
  loadManifests,
  type LoadOptions,
  type NormalizedManifest,
  PROBLEM_CODES,
} from "../manifest/index.js";
import { writeHtmlReport } from "../report/html-report.js";
import { folderRows } from "../report/folder-rows.js";
import { ReportThrottle } from "../report/report-throttle.js";
import { writeResults } from "../report/results.js";
import { writeDecisionRecords } from "../review/decision-records.js";
import { staleRetakeLines, withRetakes } from "../review/retake.js";
import { resultOf } from "../output/job-record.js";
import { DEFAULTS } from "../defaults.js";
import { noteRepeatedJobs, readManifestJobs } from "../run/notes.js";
import type { OutputDiskError } from "../errors.js";
import {
  decisionsByVersion,
  type JobRow,
  type RetakeRow,
  type StateFileError,
  versionKey,
} from "../state/job-store.js";
import { shownPath } from "../user-path.js";
import { isIgnoredPath } from "./manifest-files.js";
import { RowsFiles } from "./rows-files.js";
import { plural } from "../plural.js";

const DEFAULT_SETTLE_MS = DEFAULTS.settle.ms;
/** How often the watched folder is checked for having been deleted or replaced. */
const FOLDER_CHECK_MS = 2_000;
/** How long a file that does not end with a line break may still be being written. */
const INCOMPLETE_GRACE_MS = DEFAULTS.incompleteGrace.ms;

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

/** Runs until `signal` is aborted, or the budget stops the work; resolves after a clean stop. */
export async function watchFolder(options: WatchOptions): Promise<WatchEnd> {
  const { progress } = options;
  const dir = resolve(options.load.cwd, options.dir);
  // The live display runs from here to the end; its manifests come as they are read.
  progress.start(0, 0);
  try {
    return await watchWithProgress(options, progress, dir);
  } finally {
    progress.stop();
  }
}

async function watchWithProgress(
  options: WatchOptions,
  progress: ProgressSink,
  dir: string,
): Promise<WatchEnd> {
  const startedAt = new Date();
  let watching = true; // false once the watch ends: the last index.html stops reloading itself
  let decisionsSeen = 0; // the latest decision the outputs carry (see writeNewDecisions)
  const retakesSeen = new Map<string, string>(); // manifest -> its retakes when last run (runNewRetakes)
  // The watch ends on the user's signal, when the state file or the output disk can no longer be
  // written, or when its budget stops the work (what is in flight finishes first).
  let stateFailure: StateFileError | OutputDiskError | undefined;
  let capped = false;
  let endWatch: () => void = () => {};
  const ended = new Promise<void>((resolveEnd) => {
    endWatch = resolveEnd;
  });
  // The reports are rewritten after changes, however many: see report-throttle.ts.
  const reports = new ReportThrottle(() => writeOutputs());
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
  await engine.followInFlight();

  /**
   * results.jsonl and index.html: the jobs of the manifests in the folder now, marked as the watch's,
   * and the other videos of the output folder (report/folder-rows.ts), with their decisions.
   */
  async function writeOutputs(): Promise<void> {
    const start = performance.now();
    const rows = await engine.wantedRows();
    sayFinished(rows);
    const folder = await folderRows(
      options.store,
      options.outDir,
      rows,
      rows,
      rows.map((row) => row.manifest),
    );
    const latest = await options.store.latestDecisions();
    decisionsSeen = lastDecision(latest);
    const decisions = decisionsByVersion(latest);
    await writeResults(options.outDir, folder.rows, folder.thisRun, decisions);
    await writeHtmlReport(options.outDir, folder.rows, {
      thisRun: folder.thisRun,
      run: {
        outcome: watching ? "watching" : "stopped",
        ...(options.service !== undefined ? { service: options.service } : {}),
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
        startedAt,
      },
      decisions,
    });
    writeDecisionRecords(options.outDir, folder.rows, decisions);
    options.logger?.debug(
      { jobs: folder.rows.length, ms: Math.round(performance.now() - start), watching },
      "reports written",
    );
  }

  /** Decisions are made beside the watch (reel approve, the review page): looked for at each check. */
  async function writeNewDecisions(): Promise<void> {
    if (lastDecision(await options.store.latestDecisions()) === decisionsSeen) return;
    reports.changed();
  }

  /**
   * Retakes are queued (and withdrawn) beside the watch too (reel retake): at each check, a manifest
   * whose retakes changed is read again, which runs the new ones.
   */
  async function runNewRetakes(): Promise<void> {
    const files = new Map([...nameOf].map(([file, name]) => [name, file]));
    if (files.size === 0) return;
    const all = await options.store.listRetakes([...files.keys()]);
    for (const [name, file] of files) {
      const now = retakeSignature(all.filter((r) => r.manifest === name));
      if (now !== (retakesSeen.get(name) ?? "") && !queue.has(file)) schedule(file, () => loadFile(file));
    }
  }

  const finishedSaid = new Map<string, string>(); // manifest -> the counts last said of it, all final

  /**
   * A line per manifest whose jobs are all final ("spring: 12 Success, 1 Fail"), once per reading
   * of it and outcome: a watcher's user waits for exactly that.
   */
  function sayFinished(rows: readonly JobRow[]): void {
    const byManifest = new Map<string, JobRow[]>();
    for (const row of rows) {
      const list = byManifest.get(row.manifest) ?? [];
      list.push(row);
      byManifest.set(row.manifest, list);
    }
    for (const [manifest, list] of byManifest) {
      const final = list.every((row) =>
        row.state === "Success" ? row.file !== null : FINAL_STATES.has(row.state),
      );
      if (!final) continue;
      const counts = new Map<string, number>();
      for (const row of list) {
        const { status } = resultOf(row);
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
      const text = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
      if (finishedSaid.get(manifest) === text) continue;
      finishedSaid.set(manifest, text);
      progress.event({ stage: "finished", key: manifest, detail: text });
    }
  }

  const nameOf = new Map<string, string>(); // file -> manifest name it defines
  const reported = new Map<string, string>(); // file -> the problems last printed for it
  const clashes = new Map<string, string>(); // file skipped for a name another file holds -> that name, lower case
  const queue = new Map<string, Promise<void>>(); // one load at a time per file

  const display = (file: string): string => shownPath(options.load.cwd, file);

  const graceTimers = new Set<NodeJS.Timeout>();
  const awaitingMedia = new Set<string>(); // manifests skipped for a missing media file

  /**
   * True when `file` was changed moments ago and does not end with a line break: most likely a
   * writer paused mid-line. It is read again once the grace has passed (or at its next change).
   */
  async function stillBeingWritten(file: string): Promise<boolean> {
    let info: Stats;
    let last: Buffer;
    try {
      info = await stat(file);
      if (!info.isFile() || info.size === 0) return false;
      const handle = await open(file, "r");
      try {
        ({ buffer: last } = await handle.read(Buffer.alloc(1), 0, 1, info.size - 1));
      } finally {
        await handle.close();
      }
    } catch {
      return false; // gone, or unreadable: loadManifests reports it
    }
    const age = Date.now() - info.mtimeMs;
    if (last[0] === 0x0a || age >= INCOMPLETE_GRACE_MS) return false;
    const timer = setTimeout(() => {
      graceTimers.delete(timer);
      schedule(file, () => loadFile(file));
    }, INCOMPLETE_GRACE_MS - age);
    graceTimers.add(timer);
    return true;
  }

  async function loadFile(file: string): Promise<void> {
    if (await stillBeingWritten(file)) return;
    const { manifests, problems, warnings, rowsFiles: csvs } = await loadManifests([file], options.load);
    rowsFiles.set(file, csvs);
    const manifest = manifests[0];
    // Compared without case, as `run` does: on macOS and Windows `Promo` and `promo` share a folder.
    const same = (name: string): boolean => name.toLowerCase() === manifest?.name.toLowerCase();
    const owner = manifest && [...nameOf].find(([other, name]) => other !== file && same(name))?.[0];
    if (manifest && owner) clashes.set(file, manifest.name.toLowerCase());
    else clashes.delete(file);
    if (manifest && owner) {
      problems.push({
        file: display(file),
        line: 0,
        col: 0,
        code: "E_DUPLICATE_NAME",
        message: `manifest name '${manifest.name}' is already used by ${display(owner)}; give this one another name`,
      });
    }
    // A manifest that names media not there yet, or not whole yet (copied in after it, or still
    // being copied), is read again at each folder check: media files themselves are not watched.
    const mediaPending = (code: string): boolean =>
      code === PROBLEM_CODES.fileMissing || code === PROBLEM_CODES.mediaFormat;
    if (problems.some((p) => mediaPending(p.code))) awaitingMedia.add(file);
    else awaitingMedia.delete(file);
    // Nothing wrong but files still to land: the manifest waits for them rather than being skipped.
    const awaited = problems.every((p) => mediaPending(p.code) && p.media !== undefined)
      ? [...new Set(problems.map((p) => p.media!))]
      : [];
    const refusal = manifest && problems.length === 0 ? await options.refuseJobs?.(manifest.jobs) : undefined;
    if (refusal !== undefined) {
      problems.push({
        file: display(file),
        line: 0,
        col: 0,
        code: PROBLEM_CODES.sentElsewhere,
        message: refusal,
      });
    }
    const format = { color: options.tty ?? false, codeFrame: options.tty ?? false };
    if (problems.length > 0 || !manifest) {
      const text = formatProblems(mergeFindings(problems, warnings), format);
      // An invalid file is reported once per version, not at every event; its last valid version
      // (if any) keeps running until the file is fixed or deleted.
      if (reported.get(file) !== text) {
        reported.set(file, text);
        const outcome =
          awaited.length > 0
            ? `waiting for ${awaited.join(", ")} (read again every ${FOLDER_CHECK_MS / 1000} s; its videos run once ${awaited.length === 1 ? "it is" : "they are"} there)`
            : "skipped until fixed";
        options.report(`${text}\n${display(file)}: ${outcome}\n`);
      }
      return;
    }
    // Warnings once per version too: the manifest runs, its texts perhaps not as meant.
    const warned = formatProblems(warnings, format);
    if (warnings.length === 0) reported.delete(file);
    else if (reported.get(file) !== warned) {
      reported.set(file, warned);
      options.report(`${warned}\n`);
    }
    const previous = nameOf.get(file);
    nameOf.set(file, manifest.name);
    if (previous !== undefined && previous !== manifest.name) await release(previous);
    await runManifest(file, manifest);
  }

  /**
   * Runs the jobs of `manifest` (read from `file`), the retakes of its videos (reel retake) among
   * them: what this reading will have generated, and why, is said first (each is paid for).
   */
  async function runManifest(file: string, read: NormalizedManifest): Promise<void> {
    const retaken = await withRetakes(options.store, [read]);
    const manifest = retaken.manifests[0]!;
    retakesSeen.set(manifest.name, retakeSignature(await options.store.listRetakes([manifest.name])));
    for (const line of staleRetakeLines(retaken.stale))
      progress.event({ stage: "note", key: manifest.name, detail: line });
    const reading = await readManifestJobs(options.store, manifest, options.load.cwd, retaken.retakes);
    progress.event({
      stage: "note",
      detail: `${display(file)}: ${plural(manifest.jobs.length, "video")} of '${manifest.name}'; ${reading.why === "" ? "nothing new to generate" : `to generate: ${reading.why}`}`,
    });
    progress.event({ stage: "manifest", key: manifest.name, jobs: reading.jobs });
    await noteRepeatedJobs(progress, options.store, manifest.jobs);
    finishedSaid.delete(manifest.name); // said again once this reading's jobs are all final
    await engine.setManifestJobs(manifest.name, manifest.jobs);
    // Versions edited away or videos removed before they were sent: nothing of them to keep (a run
    // does the same at its end), else `status` would show them waiting for good.
    await options.store.forgetUnsentJobs(
      manifest.name,
      new Set(manifest.jobs.map((j) => versionKey(j.key, j.specHash))),
    );
    sayFinished(await engine.wantedRows()); // a manifest whose videos were all made already
  }

  /**
   * A manifest name no file defines any more: its unsent videos are dropped, and a file skipped
   * because it claimed the same name is read again.
   */
  async function release(name: string): Promise<void> {
    engine.dropManifest(name);
    await options.store.forgetUnsentJobs(name, new Set());
    for (const [other, claimed] of clashes) {
      if (claimed === name.toLowerCase()) schedule(other, () => loadFile(other));
    }
  }

  function schedule(file: string, work: () => Promise<void>): void {
    const previous = queue.get(file) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((error: unknown) => options.report(`${display(file)}: ${(error as Error).message}\n`))
      .finally(() => {
        if (queue.get(file) === next) queue.delete(file);
      });
    queue.set(file, next);
  }

  // A manifest is read again when its rows CSV changes, as when it changes itself.
  const rowsFiles = new RowsFiles(options.settleMs ?? DEFAULT_SETTLE_MS, (manifests) => {
    for (const file of manifests) schedule(file, () => loadFile(file));
  });

  const onFile = (path: string): void => {
    if (!isManifestFile(path)) return;
    const file = resolve(path);
    schedule(file, () => loadFile(file));
  };
  const onUnlink = (path: string): void => {
    const file = resolve(path);
    schedule(file, async () => {
      const name = nameOf.get(file);
      reported.delete(file);
      awaitingMedia.delete(file);
      rowsFiles.set(file, []);
      clashes.delete(file);
      if (name === undefined) return;
      nameOf.delete(file);
      await release(name);
      progress.event({ stage: "manifest", key: name, jobs: [] });
      progress.event({
        stage: "note",
        detail: `${display(file)} deleted: its unsubmitted videos are dropped`,
      });
      reports.changed();
    });
  };

  /** A chokidar watcher of `dir`, resolved once its first scan (every file there: "add") is done. */
  async function startWatcher(): Promise<FSWatcher> {
    // A link given as DIR is followed to the folder it names: chokidar, which follows no links,
    // watched the link alone, and nothing ever landed. Its files keep their names under DIR.
    const real = await realpath(dir).catch(() => dir);
    const asGiven = (path: string): string => (real === dir ? path : join(dir, relative(real, path)));
    const started = watch(real, {
      // The watched folder itself is never skipped, hidden (~/.queue) or not: only what is below it.
      ignored: (path, stats) => path !== real && isIgnoredPath(path, stats ? stats.isFile() : undefined),
      ignoreInitial: false,
      followSymlinks: false,
      awaitWriteFinish: { stabilityThreshold: options.settleMs ?? DEFAULT_SETTLE_MS, pollInterval: 50 },
    });
    started.on("add", (path) => onFile(asGiven(path)));
    started.on("change", (path) => onFile(asGiven(path)));
    started.on("unlink", (path) => onUnlink(asGiven(path)));
    started.on("error", (error) => options.report(`watch: ${(error as Error).message}\n`));
    await new Promise<void>((resolveReady) => started.once("ready", () => resolveReady()));
    return started;
  }

  let watcher = await startWatcher();
  progress.event({ stage: "note", detail: `watching ${display(dir)} for *.yaml / *.yml (Ctrl-C to stop)` });
  options.onReady?.();

  // chokidar does not notice its folder being replaced (`rm -rf DIR && mkdir DIR`, or moved away and
  // back): it would watch the deleted one for ever, in silence. One stat every few seconds tells,
  // and a new folder gets a new watcher, whose first scan picks up what is in it.
  let identity = await folderIdentity(dir);
  let checking = false;
  let stopping = false;
  const guard = setInterval(() => {
    for (const file of awaitingMedia) if (!queue.has(file)) schedule(file, () => loadFile(file));
    if (checking) return;
    checking = true;
    void (async () => {
      await writeNewDecisions();
      await runNewRetakes();
      const now = await folderIdentity(dir);
      if (now === identity) return;
      identity = now;
      if (now === undefined) {
        progress.event({ stage: "note", detail: `${display(dir)} is gone: waiting for it to come back` });
        return;
      }
      progress.event({ stage: "note", detail: `${display(dir)} was replaced: watching the new folder` });
      // Closed first: chokidar shares one OS watch per path among its watchers, and the old one
      // still watches the deleted folder.
      if (stopping) return;
      await watcher.close();
      watcher = await startWatcher();
      if (stopping) await watcher.close(); // the stop below may have closed the old one meanwhile
    })()
      .catch((error: unknown) => options.report(`watch: ${(error as Error).message}\n`))
      .finally(() => {
        checking = false;
      });
  }, FOLDER_CHECK_MS);

  if (options.signal?.aborted) endWatch();
  options.signal?.addEventListener("abort", () => endWatch(), { once: true });
  await ended;
  stopping = true;
  clearInterval(guard);
  for (const timer of graceTimers) clearTimeout(timer);
  await watcher.close();
  await rowsFiles.close();
  await Promise.all([...queue.values()]);
  await engine.whenIdle();
  await engine.dispose();
  // No write of a watching page may land after the last one.
  await reports.stop();
  if (stateFailure) throw stateFailure;
  watching = false;
  await writeOutputs();
  return { rows: await engine.wantedRows(), capped };
}

/** What tells a manifest's retakes apart from what they were: each one's id and whether it is withdrawn. */
function retakeSignature(retakes: readonly RetakeRow[]): string {
  return retakes.map((r) => `${r.id}${r.state === "withdrawn" ? "w" : ""}`).join(",");
}

/** The id of the latest of `decisions` (0: none): a decision made since has a higher one. */
function lastDecision(decisions: readonly { readonly id: number }[]): number {
  return decisions.reduce((last, row) => Math.max(last, row.id), 0);
}

const FINAL_STATES: ReadonlySet<JobRow["state"]> = new Set(["Fail", "Canceled", "uncertain"]);

/** The folder's device and inode ("dev:ino"), or undefined when it does not exist. */
async function folderIdentity(dir: string): Promise<string | undefined> {
  try {
    const info = await stat(dir);
    return info.isDirectory() ? `${info.dev}:${info.ino}` : undefined;
  } catch {
    return undefined;
  }
}
