// How a watch reads a manifest file of its folder: once it is whole, checked as `run` checks it,
// its problems said once per version, and its jobs (with their retakes) handed to the engine. A file
// deleted, or a name given up, drops what was not sent.
import type { Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import {
  formatProblems,
  loadManifests,
  mergeFindings,
  type NormalizedManifest,
  PROBLEM_CODES,
} from "../manifest/index.js";
import { plural } from "../plural.js";
import { staleRetakeLines, withRetakes } from "../review/retake.js";
import { noteRepeatedJobs, readManifestJobs } from "../drivers/notes.js";
import { type RetakeRow, versionKey } from "../state/job-store.js";
import {
  display,
  FOLDER_CHECK_MS,
  INCOMPLETE_GRACE_MS,
  schedule,
  type WatchContext,
} from "./watch-context.js";
import { sayFinished } from "./watch-outputs.js";

/** Reads `file` (again), after the work on it under way. */
export function reread(ctx: WatchContext, file: string): void {
  schedule(ctx, file, () => loadFile(ctx, file));
}

/**
 * True when `file` was changed moments ago and does not end with a line break: most likely a
 * writer paused mid-line. It is read again once the grace has passed (or at its next change).
 */
async function stillBeingWritten(ctx: WatchContext, file: string): Promise<boolean> {
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
    ctx.graceTimers.delete(timer);
    reread(ctx, file);
  }, INCOMPLETE_GRACE_MS - age);
  ctx.graceTimers.add(timer);
  return true;
}

async function loadFile(ctx: WatchContext, file: string): Promise<void> {
  const { options, nameOf, clashes, awaitingMedia, reported } = ctx;
  if (await stillBeingWritten(ctx, file)) return;
  const { manifests, problems, warnings, rowsFiles: csvs } = await loadManifests([file], options.load);
  ctx.rowsFiles.set(file, csvs);
  const manifest = manifests[0];
  // Compared without case, as `run` does: on macOS and Windows `Promo` and `promo` share a folder.
  const same = (name: string): boolean => name.toLowerCase() === manifest?.name.toLowerCase();
  const owner = manifest && [...nameOf].find(([other, name]) => other !== file && same(name))?.[0];
  if (manifest && owner) clashes.set(file, manifest.name.toLowerCase());
  else clashes.delete(file);
  if (manifest && owner) {
    problems.push({
      file: display(ctx, file),
      line: 0,
      col: 0,
      code: "E_DUPLICATE_NAME",
      message: `manifest name '${manifest.name}' is already used by ${display(ctx, owner)}; give this one another name`,
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
      file: display(ctx, file),
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
      options.report(`${text}\n${display(ctx, file)}: ${outcome}\n`);
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
  if (previous !== undefined && previous !== manifest.name) await release(ctx, previous);
  await runManifest(ctx, file, manifest);
}

/**
 * Runs the jobs of `manifest` (read from `file`), the retakes of its videos (reel retake) among
 * them: what this reading will have generated, and why, is said first (each is paid for).
 */
async function runManifest(ctx: WatchContext, file: string, read: NormalizedManifest): Promise<void> {
  const { options, progress, engine } = ctx;
  const retaken = await withRetakes(options.store, [read]);
  const manifest = retaken.manifests[0]!;
  ctx.retakesSeen.set(manifest.name, retakeSignature(await options.store.listRetakes([manifest.name])));
  for (const line of staleRetakeLines(retaken.stale))
    progress.event({ stage: "note", key: manifest.name, detail: line });
  const reading = await readManifestJobs(options.store, manifest, options.load.cwd, retaken.retakes);
  progress.event({
    stage: "note",
    detail: `${display(ctx, file)}: ${plural(manifest.jobs.length, "video")} of '${manifest.name}'; ${reading.why === "" ? "nothing new to generate" : `to generate: ${reading.why}`}`,
  });
  progress.event({ stage: "manifest", key: manifest.name, jobs: reading.jobs });
  await noteRepeatedJobs(progress, options.store, manifest.jobs);
  ctx.finishedSaid.delete(manifest.name); // said again once this reading's jobs are all final
  await engine.setManifestJobs(manifest.name, manifest.jobs);
  // Versions edited away or videos removed before they were sent: nothing of them to keep (a run
  // does the same at its end), else `status` would show them waiting for good.
  await options.store.forgetUnsentJobs(
    manifest.name,
    new Set(manifest.jobs.map((j) => versionKey(j.key, j.specHash))),
  );
  sayFinished(ctx, await engine.wantedRows()); // a manifest whose videos were all made already
}

/**
 * A manifest name no file defines any more: its unsent videos are dropped, and a file skipped
 * because it claimed the same name is read again.
 */
async function release(ctx: WatchContext, name: string): Promise<void> {
  ctx.engine.dropManifest(name);
  await ctx.options.store.forgetUnsentJobs(name, new Set());
  for (const [other, claimed] of ctx.clashes) {
    if (claimed === name.toLowerCase()) reread(ctx, other);
  }
}

/** `file` was deleted: the videos of the manifest it defined that were not sent are dropped. */
export function forgetFile(ctx: WatchContext, file: string): void {
  schedule(ctx, file, async () => {
    const name = ctx.nameOf.get(file);
    ctx.reported.delete(file);
    ctx.awaitingMedia.delete(file);
    ctx.rowsFiles.set(file, []);
    ctx.clashes.delete(file);
    if (name === undefined) return;
    ctx.nameOf.delete(file);
    await release(ctx, name);
    ctx.progress.event({ stage: "manifest", key: name, jobs: [] });
    ctx.progress.event({
      stage: "note",
      detail: `${display(ctx, file)} deleted: its unsubmitted videos are dropped`,
    });
    ctx.reports.changed();
  });
}

/**
 * Retakes are queued (and withdrawn) beside the watch too (reel retake): at each check, a manifest
 * whose retakes changed is read again, which runs the new ones.
 */
export async function runNewRetakes(ctx: WatchContext): Promise<void> {
  const files = new Map([...ctx.nameOf].map(([file, name]) => [name, file]));
  if (files.size === 0) return;
  const all = await ctx.options.store.listRetakes([...files.keys()]);
  for (const [name, file] of files) {
    const now = retakeSignature(all.filter((r) => r.manifest === name));
    if (now !== (ctx.retakesSeen.get(name) ?? "") && !ctx.queue.has(file)) reread(ctx, file);
  }
}

/** What tells a manifest's retakes apart from what they were: each one's id and whether it is withdrawn. */
function retakeSignature(retakes: readonly RetakeRow[]): string {
  return retakes.map((r) => `${r.id}${r.state === "withdrawn" ? "w" : ""}`).join(",");
}
