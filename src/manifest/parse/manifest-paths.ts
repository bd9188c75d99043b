// The manifest files a command names: files as given, folders searched for *.yaml / *.yml (sorted,
// hidden entries skipped, links to listed files read once); and the --allow-read folders checked.
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { UsageError } from "../../errors/usage.js";
import { shownPath } from "../../user-path.js";
import { isManifestFile } from "./manifest-file.js";
import { nearestPath } from "./near-path.js";
import { PROBLEM_CODES, type Problem } from "../problem.js";

async function collectFolder(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => !e.name.startsWith("."))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of names) {
    const full = path.join(dir, entry.name);
    // Symlinked folders are not followed: a link back up the tree would never end.
    if (entry.isDirectory()) await collectFolder(full, out);
    else if ((entry.isFile() || entry.isSymbolicLink()) && isManifestFile(entry.name)) out.push(full);
  }
}

/** The manifest files named by `paths` (files as given, folders searched for *.yaml / *.yml), in order. */
export async function expandPaths(
  paths: readonly string[],
  cwd: string,
  problems: Problem[],
): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const given of paths) {
    const abs = path.resolve(cwd, given);
    let found: string[];
    try {
      const info = await stat(abs);
      found = [];
      if (info.isDirectory()) {
        await collectFolder(abs, found);
        if (found.length === 0) {
          // Most likely a mistyped folder: running "nothing" would also empty OUT/results.jsonl.
          problems.push({
            file: given,
            line: 0,
            col: 0,
            message: "no manifest (*.yaml, *.yml) in this folder or below",
            code: PROBLEM_CODES.notFound,
          });
        }
      } else found.push(abs);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const near = code === "ENOENT" ? nearestPath(abs) : undefined;
      problems.push({
        file: given,
        line: 0,
        col: 0,
        message:
          code === "ENOENT"
            ? `no such file or folder${near ? `; did you mean ${shownPath(cwd, near)}?` : ""}`
            : `cannot read: ${(error as Error).message}`,
        code: code === "ENOENT" ? PROBLEM_CODES.notFound : PROBLEM_CODES.readFailed,
      });
      continue;
    }
    for (const file of found) {
      if (!seen.has(file)) {
        seen.add(file);
        files.push(file);
      }
    }
  }
  return dropLinksToListedFiles(files);
}

/**
 * A link to a manifest that is listed too (`alias.yaml -> good.yaml` in the same folder) is the same
 * file: read once, as itself. Read twice, a manifest without `name:` would become two manifests
 * named after the two files, and its videos would be paid for twice.
 */
async function dropLinksToListedFiles(files: string[]): Promise<string[]> {
  const real = await Promise.all(files.map((file) => realpath(file).catch(() => file)));
  const listed = new Set(files);
  const kept = new Set<string>();
  return files.filter((file, i) => {
    const target = real[i]!;
    if (target !== file && listed.has(target)) return false; // the file itself is listed
    if (kept.has(target)) return false; // two links to one file outside the list: the first
    kept.add(target);
    return true;
  });
}

export async function isFolder(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Refuses `--allow-read` values that name no folder: a mistake in the command, not in a manifest,
 * so it is said before anything is read (exit 2).
 */
export async function checkAllowRead(dirs: readonly string[], cwd: string): Promise<void> {
  for (const dir of dirs) {
    const abs = path.resolve(cwd, dir);
    if (!(await isFolder(abs))) {
      const exists = await stat(abs).then(
        () => true,
        () => false,
      );
      throw new UsageError(
        `--allow-read ${dir}: ${exists ? "is a file, not a folder; give the folder that holds it" : "no such folder"} (it names a folder manifests may read files from)`,
      );
    }
  }
}
