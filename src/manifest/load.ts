// Loading manifests: files and folders (manifest-paths.ts) -> each file loaded (load-file.ts:
// parse -> validate -> checks a schema can't express -> normalize) -> names unique across the run.
// Problems are returned as data, every problem of every file at once; a file with problems yields no
// manifest, the others still load.
import path from "node:path";
import { shownPath } from "../user-path.js";
import { FileChecker, hashFileStreaming } from "./validate/check-files.js";
import { rememberSource } from "./format-problems.js";
import type { FileOutcome } from "./load-context.js";
import { loadFile } from "./load-file.js";
import { expandPaths, isFolder } from "./parse/manifest-paths.js";
import type { VideoTally } from "./expand/over-limit.js";
import { compareProblems, PROBLEM_CODES, type Problem, type Warning } from "./problem.js";
import type { LoadOptions, LoadResult, NormalizedManifest } from "./types.js";
import { runOverLimit } from "./expand/video-count.js";
import { DEFAULTS } from "../defaults.js";

export { checkAllowRead } from "./parse/manifest-paths.js";
export { DEFAULT_MAX_FILE_BYTES } from "./parse/read-manifest.js";

/**
 * Loads manifests from files and folders (folders: every `*.yaml` / `*.yml` below, sorted, hidden
 * entries skipped). Returns the valid manifests and every problem found, sorted by file and position.
 */
export async function loadManifests(paths: string[], options: LoadOptions): Promise<LoadResult> {
  const cwd = path.resolve(options.cwd);
  const opts: LoadOptions = { ...options, cwd };
  const problems: Problem[] = [];
  const warnings: Warning[] = [];

  // The CLI refuses an --allow-read that names no folder (checkAllowRead); one removed since (a long
  // watch) allows nothing, so files under it are reported as outside.
  const allowed = [cwd];
  for (const dir of options.allowRead ?? []) {
    const abs = path.resolve(cwd, dir);
    if (await isFolder(abs)) allowed.push(abs);
  }

  const files = await expandPaths(paths, cwd, problems);
  const checker = new FileChecker({ cwd, allowed, hashFile: options.hashFile ?? hashFileStreaming });
  const outcomes: FileOutcome[] = [];
  const tally: VideoTally = { limit: options.maxVideos ?? DEFAULTS.maxVideos, admitted: 0, all: 0 };
  const rowsFiles = new Set<string>();
  for (const file of files) outcomes.push(await loadFile(file, opts, checker, tally, rowsFiles));

  // Manifest names name output folders: unique across the run, whatever the case.
  const names = new Map<string, string>();
  const manifests: NormalizedManifest[] = [];
  outcomes.forEach((outcome, i) => {
    const file = shownPath(cwd, files[i]!);
    const fileProblems = [...outcome.problems];
    if (outcome.overRun) {
      const { count, line, col } = outcome.overRun;
      const message = runOverLimit(tally.all, count, tally.limit);
      fileProblems.push({ file, line, col, message, code: PROBLEM_CODES.tooManyVideos });
    }
    if (outcome.name) {
      const key = outcome.name.name.toLowerCase();
      const first = names.get(key);
      if (first === undefined) names.set(key, file);
      else {
        fileProblems.push({
          file,
          ...outcome.name.position(),
          message: `manifest name "${outcome.name.name}" is already used by ${first}; names must be unique in a run (they name the output folders)`,
          code: PROBLEM_CODES.duplicateName,
        });
      }
    }
    // The manifest's own problems first, then those placed in its rows files.
    fileProblems.sort(
      (a, b) =>
        Number(a.file !== file) - Number(b.file !== file) ||
        (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
        compareProblems(a, b),
    );
    for (const p of fileProblems) {
      const source = p.file === file ? outcome.text : outcome.sources?.get(p.file);
      if (source !== undefined) rememberSource(p, source);
    }
    problems.push(...fileProblems);
    const fileWarnings = [...(outcome.warnings ?? [])].sort(compareProblems);
    if (outcome.text !== undefined) for (const w of fileWarnings) rememberSource(w, outcome.text);
    warnings.push(...fileWarnings);
    if (outcome.manifest && fileProblems.length === 0) manifests.push(outcome.manifest);
  });

  const found = outcomes.flatMap((outcome) => (outcome.name ? [outcome.name.name] : []));
  return { manifests, problems, warnings, names: found, rowsFiles: [...rowsFiles] };
}
