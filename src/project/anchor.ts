// Where a command's state and output folder live: anchored to the manifests, never to the folder
// the shell happens to be in. Running the same manifests from another folder must find the same
// state, or the jobs it records as done would be paid for again (`reel run ../x.yaml` from a
// sibling folder did exactly that when the default was `.reel/state.db` under the cwd).
//
// The rule, walking up from each manifest's folder as git finds `.git`:
//  1. the nearest folder holding a project file (`reel.yaml`) anchors them: its settings apply;
//  2. else the nearest folder holding a state file at `.reel/state.db` (a project reel ran in
//     before there was a project file) anchors them;
//  3. else nothing ran them yet: the new state goes in the current folder when it holds every
//     manifest (the old default, for the usual `reel run manifests/`), else in their nearest common
//     folder, where the next run, from wherever, finds it by rule 2.
// Manifests whose walks end at different anchors are refused together: one run cannot use two
// states, and picking one would pay again for the jobs the other recorded. The walk starts from the
// real folder (real-path.ts): manifests reached through a symbolic link belong where the link
// leads, whichever way they are reached.
import { statSync } from "node:fs";
import { dirname, join, parse } from "node:path";
import { UsageError } from "../errors/usage.js";
import { realPathOf } from "../real-path.js";
import { isInside, shownPath } from "../user-path.js";
import { PROJECT_DEFAULTS, PROJECT_FILE_NAME } from "./project-file.js";

/** How the anchor was found: said on the first line of every command that uses a state. */
export type AnchorKind = "project" | "state" | "new";

export interface Anchor {
  readonly dir: string;
  readonly kind: AnchorKind;
}

/** The nearest anchor at or above `start` (absolute), or undefined when there is none up to the root. */
export function findAnchorAbove(start: string): Anchor | undefined {
  for (const anchor of anchorsFrom(start)) return anchor;
  return undefined;
}

/**
 * Every anchor at or above `start` (absolute), nearest first. The nearest one anchors a run; those
 * further up may hold states that ran the same manifests before a nearer project was made.
 */
export function* anchorsFrom(start: string): Generator<Anchor> {
  let dir = start;
  for (;;) {
    if (isFile(join(dir, PROJECT_FILE_NAME))) yield { dir, kind: "project" };
    else if (isFile(join(dir, PROJECT_DEFAULTS.state))) yield { dir, kind: "state" };
    const up = dirname(dir);
    if (up === dir) return;
    dir = up;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The anchor of manifests found under `starts` (absolute: the folders given, and the folders of
 * the files given). Throws UsageError when they belong to different anchors.
 */
export function anchorOf(starts: readonly string[], cwd: string): Anchor {
  const found = new Map<string, { anchor: Anchor | undefined; starts: string[] }>();
  for (const start of new Set(starts)) {
    const anchor = findAnchorAbove(start);
    const key = anchor?.dir ?? "";
    const entry = found.get(key) ?? { anchor, starts: [] };
    entry.starts.push(start);
    found.set(key, entry);
  }
  if (found.size > 1) {
    const lines = [...found.values()].map(
      ({ anchor, starts: under }) =>
        `  ${under.map((s) => shownPath(cwd, s)).join(", ")}: ${anchor ? describeAnchor(anchor, cwd) : "no project or state above it"}`,
    );
    throw new UsageError(
      `these manifests belong to different projects, and one run uses one state:\n${lines.join("\n")}\nRun each project's manifests separately (or move them into one project).`,
    );
  }
  const only = [...found.values()][0];
  if (only?.anchor) return only.anchor;
  const here = realPathOf(cwd);
  const all = only?.starts ?? [here];
  const dir = all.every((start) => isInside(start, here)) ? here : commonFolder(all);
  return { dir, kind: "new" };
}

/**
 * A manifest whose own walk ends at another anchor than the one its run uses (a folder given whose
 * subfolder holds a project or state of its own): refused, as in anchorOf.
 */
export function checkManifestsAnchor(anchor: Anchor, files: readonly string[], cwd: string): void {
  const foreign = files.filter((file) => {
    const own = findAnchorAbove(realPathOf(dirname(file)));
    return anchor.kind === "new" ? own !== undefined : own?.dir !== anchor.dir;
  });
  if (foreign.length === 0) return;
  const first = foreign[0]!;
  const own = findAnchorAbove(realPathOf(dirname(first)));
  throw new UsageError(
    `${shownPath(cwd, first)}${foreign.length > 1 ? ` (and ${foreign.length - 1} more)` : ""} belongs to ${own ? describeAnchor(own, cwd) : "no project"}, not to ${anchor.kind === "new" ? `a new state in ${shownPath(cwd, anchor.dir)}` : describeAnchor(anchor, cwd)}: one run uses one state. Run that project's manifests on their own.`,
  );
}

export function describeAnchor(anchor: Anchor, cwd: string): string {
  const where = shownPath(cwd, anchor.dir);
  switch (anchor.kind) {
    case "project":
      return `the project ${shownPath(cwd, join(anchor.dir, PROJECT_FILE_NAME))}`;
    case "state":
      return `the state ${shownPath(cwd, join(anchor.dir, PROJECT_DEFAULTS.state))}`;
    case "new":
      return `a new state in ${where}`;
  }
}

/** The deepest folder holding every one of `paths` (absolute). */
function commonFolder(paths: readonly string[]): string {
  const root = parse(paths[0]!).root;
  let common = paths[0]!;
  for (const path of paths.slice(1)) {
    while (!isInside(path, common)) {
      const up = dirname(common);
      if (up === common) return root;
      common = up;
    }
  }
  return common;
}

/**
 * Where the anchor search starts for a path given on the command line: a folder, or a file's
 * folder, as typed (`real`: false) or real (the anchor's walk).
 */
export function startOf(path: string, { real = true } = {}): string {
  let folder: string;
  try {
    folder = statSync(path).isDirectory() ? path : dirname(path);
  } catch {
    folder = dirname(path);
  }
  return real ? realPathOf(folder) : folder;
}
