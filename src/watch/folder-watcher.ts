// The watch's eyes on its folder: a chokidar watcher whose events read a manifest (again) or forget a
// deleted one, and a check every few seconds that also notices the folder itself replaced, decisions
// and retakes made beside the watch, and media a waiting manifest names.
import { realpath, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { isManifestFile } from "../manifest/index.js";
import { forgetFile, reread, runNewRetakes } from "./manifest-reading.js";
import { isIgnoredPath } from "./manifest-files.js";
import { DEFAULT_SETTLE_MS, display, FOLDER_CHECK_MS, type WatchContext } from "./watch-context.js";
import { writeNewDecisions } from "./watch-outputs.js";

export interface FolderWatch {
  /** Stops the checks and closes the watcher (the readings under way go on: see ctx.queue). */
  stop(): Promise<void>;
}

/** Watches `ctx.dir` from its first scan on (every file there is read), until `stop`. */
export async function watchFiles(ctx: WatchContext): Promise<FolderWatch> {
  const { dir, progress, options } = ctx;
  let watcher = await startWatcher(ctx);
  progress.event({
    stage: "note",
    detail: `watching ${display(ctx, dir)} for *.yaml / *.yml (Ctrl-C to stop)`,
  });
  options.onReady?.();

  // chokidar does not notice its folder being replaced (`rm -rf DIR && mkdir DIR`, or moved away and
  // back): it would watch the deleted one for ever, in silence. One stat every few seconds tells,
  // and a new folder gets a new watcher, whose first scan picks up what is in it.
  let identity = await folderIdentity(dir);
  let checking = false;
  let stopping = false;
  const guard = setInterval(() => {
    for (const file of ctx.awaitingMedia) if (!ctx.queue.has(file)) reread(ctx, file);
    if (checking) return;
    checking = true;
    void (async () => {
      await writeNewDecisions(ctx);
      await runNewRetakes(ctx);
      const now = await folderIdentity(dir);
      if (now === identity) return;
      identity = now;
      if (now === undefined) {
        progress.event({
          stage: "note",
          detail: `${display(ctx, dir)} is gone: waiting for it to come back`,
        });
        return;
      }
      progress.event({ stage: "note", detail: `${display(ctx, dir)} was replaced: watching the new folder` });
      // Closed first: chokidar shares one OS watch per path among its watchers, and the old one
      // still watches the deleted folder.
      if (stopping) return;
      await watcher.close();
      watcher = await startWatcher(ctx);
      if (stopping) await watcher.close(); // the stop below may have closed the old one meanwhile
    })()
      .catch((error: unknown) => options.report(`watch: ${(error as Error).message}\n`))
      .finally(() => {
        checking = false;
      });
  }, FOLDER_CHECK_MS);

  return {
    async stop() {
      stopping = true;
      clearInterval(guard);
      await watcher.close();
    },
  };
}

/** A chokidar watcher of `ctx.dir`, resolved once its first scan (every file there: "add") is done. */
async function startWatcher(ctx: WatchContext): Promise<FSWatcher> {
  const { dir, options } = ctx;
  // A link given as DIR is followed to the folder it names: chokidar, which follows no links,
  // watched the link alone, and nothing ever landed. Its files keep their names under DIR.
  const real = await realpath(dir).catch(() => dir);
  const asGiven = (path: string): string => (real === dir ? path : join(dir, relative(real, path)));
  const onFile = (path: string): void => {
    if (isManifestFile(path)) reread(ctx, resolve(path));
  };
  const started = watch(real, {
    // The watched folder itself is never skipped, hidden (~/.queue) or not: only what is below it.
    ignored: (path, stats) => path !== real && isIgnoredPath(path, stats ? stats.isFile() : undefined),
    ignoreInitial: false,
    followSymlinks: false,
    awaitWriteFinish: { stabilityThreshold: options.settleMs ?? DEFAULT_SETTLE_MS, pollInterval: 50 },
  });
  started.on("add", (path) => onFile(asGiven(path)));
  started.on("change", (path) => onFile(asGiven(path)));
  started.on("unlink", (path) => forgetFile(ctx, resolve(asGiven(path))));
  started.on("error", (error) => options.report(`watch: ${(error as Error).message}\n`));
  await new Promise<void>((resolveReady) => started.once("ready", () => resolveReady()));
  return started;
}

/** The folder's device and inode ("dev:ino"), or undefined when it does not exist. */
async function folderIdentity(dir: string): Promise<string | undefined> {
  try {
    const info = await stat(dir);
    return info.isDirectory() ? `${info.dev}:${info.ino}` : undefined;
  } catch {
    return undefined;
  }
}
