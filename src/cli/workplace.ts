// Where a command's state and output folder are, and which settings apply: flags first, then REEL_*
// variables, then the project file, then the anchor's defaults (see project/anchor.ts). Every
// command that uses a state says on its first line which it uses, and why.
import { join, resolve } from "node:path";
import { UsageError } from "../errors/usage.js";
import {
  type Anchor,
  anchorOf,
  checkManifestsAnchor,
  findAnchorAbove,
  type Project,
  PROJECT_DEFAULTS,
  PROJECT_FILE_NAME,
  readProject,
  startOf,
} from "../project/index.js";
import { isPostgresUrl, redactedUrl } from "../state/open-job-store.js";
import { realPathOf } from "../real-path.js";
import { shownPath } from "../user-path.js";
import type { CliIO, ParsedArgs } from "./command.js";
import { refusePassedOverStates } from "./passed-over-states.js";

export interface Workplace {
  readonly anchor: Anchor;
  /** The project file, when the anchor is one. */
  readonly project?: Project;
  /** The project's folder (its real path, and as the paths given reach it): its manifests read its files. */
  readonly projectRoots: readonly string[];
  readonly statePath: string;
  readonly outDir: string;
  /** Where the state path came from: a flag, the environment, or the anchor (project or defaults). */
  readonly stateFrom: "--state" | "REEL_STATE" | "--store" | "REEL_STORE" | "anchor";
  /**
   * The shared store on PostgreSQL (--store, REEL_STORE, the project's `store`), when one is used:
   * the jobs live there; the state file's folder still holds this machine's logs, caches and the
   * sandbox's data.
   */
  readonly storeUrl?: string;
}

/** A flag's value; an empty one is refused (`--out ""` would mean the current folder). */
export function flagValue(values: ParsedArgs["values"], name: string): string | undefined {
  const v = values[name];
  if (typeof v !== "string") return undefined;
  if (v.trim() === "") throw new UsageError(`--${name} was given an empty value`);
  return v;
}

/**
 * A REEL_* variable, or undefined when unset or empty: `REEL_OUT= reel run` (or a CI variable
 * exported empty) means the default, not the current folder.
 */
export function envSetting(env: CliIO["env"], name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value;
}

/**
 * The workplace of manifests given as `paths` (as typed; none: the current folder, as `status`
 * without paths).
 */
export function workplaceOf(paths: readonly string[], args: ParsedArgs, io: CliIO): Workplace {
  const given = paths.length > 0 ? paths : ["."];
  const starts = given.map((path) => startOf(resolve(io.cwd, path)));
  const anchor = anchorOf(starts, io.cwd);
  const project =
    anchor.kind === "project"
      ? readProject(
          join(anchor.dir, PROJECT_FILE_NAME),
          shownPath(io.cwd, join(anchor.dir, PROJECT_FILE_NAME)),
        )
      : undefined;
  let stateFlag = flagValue(args.values, "state");
  const stateEnv = envSetting(io.env, "REEL_STATE");
  const outGiven = flagValue(args.values, "out") ?? envSetting(io.env, "REEL_OUT");
  // --store URL (REEL_STORE): a postgres:// URL selects the shared store; a path is the state file.
  const storeFlag = flagValue(args.values, "store");
  const storeRaw = storeFlag ?? envSetting(io.env, "REEL_STORE");
  const storeName = storeFlag !== undefined ? "--store" : "REEL_STORE";
  let storeUrl: string | undefined;
  if (storeRaw !== undefined && isPostgresUrl(storeRaw)) storeUrl = storeRaw;
  else if (storeRaw !== undefined) {
    if (stateFlag !== undefined && resolve(io.cwd, stateFlag) !== resolve(io.cwd, storeRaw)) {
      throw new UsageError(`${storeName} names a state file and --state another: give one of them`);
    }
    stateFlag = storeRaw;
  } else if (project?.store !== undefined) storeUrl = project.store;
  const stateFrom: Workplace["stateFrom"] =
    storeRaw !== undefined && storeUrl === undefined
      ? storeName
      : stateFlag !== undefined
        ? "--state"
        : stateEnv !== undefined
          ? "REEL_STATE"
          : "anchor";
  return {
    anchor,
    ...(project ? { project } : {}),
    projectRoots: project ? projectRootsOf(given, io.cwd) : [],
    statePath:
      stateFlag !== undefined || stateEnv !== undefined
        ? resolve(io.cwd, (stateFlag ?? stateEnv)!)
        : (project?.statePath ?? join(anchor.dir, PROJECT_DEFAULTS.state)),
    outDir:
      outGiven !== undefined
        ? resolve(io.cwd, outGiven)
        : (project?.outDir ?? join(anchor.dir, PROJECT_DEFAULTS.out)),
    stateFrom,
    ...(storeUrl !== undefined ? { storeUrl } : {}),
  };
}

/**
 * The first line of every command that uses a state: which state and output folder, and why those
 * (a run from another folder that would start a new state says so before anything is paid).
 */
export function workplaceLine(place: Workplace, cwd: string, exists: boolean): string {
  const shown = (path: string): string => shownPath(cwd, path);
  if (place.storeUrl !== undefined) {
    // The shared store: the URL without its password, whoever reads this line.
    return `store ${redactedUrl(place.storeUrl)} · out ${shown(place.outDir)}`;
  }
  // Short: it should fit 80 columns above the live display in the usual case.
  const fresh = place.stateFrom === "anchor" && place.anchor.kind === "new";
  const why =
    place.stateFrom !== "anchor"
      ? `given by ${place.stateFrom}`
      : place.anchor.kind === "project"
        ? `project ${shown(join(place.anchor.dir, PROJECT_FILE_NAME))}`
        : place.anchor.kind === "state"
          ? "found above the manifests"
          : "new: no project or state above";
  return `state ${shown(place.statePath)}${exists || fresh ? "" : " (new)"} · out ${shown(place.outDir)} · ${why}`;
}

/** The same, for --json documents. */
export function workplaceJson(place: Workplace): Record<string, unknown> {
  return {
    state: place.statePath,
    store: place.storeUrl === undefined ? null : redactedUrl(place.storeUrl),
    out: place.outDir,
    project: place.project?.file ?? null,
    anchor: { dir: place.anchor.dir, kind: place.anchor.kind },
  };
}

/**
 * The checks of a workplace that need the manifests read: each manifest's own walk ends at this
 * anchor, and no other state that could be theirs (the old default in the current folder, a state
 * above) has their work (both skipped when --state or REEL_STATE chose).
 */
export function checkWorkplace(
  place: Workplace,
  manifests: readonly { readonly file: string; readonly name: string }[],
  cwd: string,
): void {
  if (place.stateFrom !== "anchor" || place.storeUrl !== undefined) return;
  checkManifestsAnchor(
    place.anchor,
    manifests.map((m) => resolve(cwd, m.file)),
    cwd,
  );
  refusePassedOverStates(
    place,
    cwd,
    manifests.map((m) => m.name),
  );
}

/** Manifests under a project may read the project's files, from wherever reel was started. */
export function withProjectRoot(allowRead: readonly string[], place: Workplace): string[] {
  return [...allowRead, ...place.projectRoots];
}

/**
 * The folders of the projects (reel.yaml) above each of `paths`, for commands that use no state
 * (`validate`): manifests may read their project's files, as in `run`.
 */
export function projectRootsOf(paths: readonly string[], cwd: string): string[] {
  const roots = new Set<string>();
  for (const path of paths) {
    const given = resolve(cwd, path);
    const anchor = findAnchorAbove(startOf(given));
    if (anchor?.kind !== "project") continue;
    roots.add(anchor.dir);
    // The same project as the path reaches it through a link: a manifest read that way names its
    // media through the link too.
    const typed = findAnchorAbove(startOf(given, { real: false }));
    if (typed && typed.dir !== anchor.dir && realPathOf(typed.dir) === anchor.dir) roots.add(typed.dir);
  }
  return [...roots];
}
