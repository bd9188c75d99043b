// State files a command anchored to one state could pass over while they hold work of the same
// manifests: the old default under the current folder (before projects, `.reel/state.db` went
// there wherever the manifests were), and the state of every project or state above the anchor (a
// project made inside the folder of one that already ran its manifests). Going on with a new state
// would pay for that work again: refused, with the ways on. The state knows manifests by name.
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { DEFAULTS } from "../defaults.js";
import { UsageError } from "../errors/usage.js";
import {
  type Anchor,
  anchorsFrom,
  describeAnchor,
  PROJECT_DEFAULTS,
  PROJECT_FILE_NAME,
  readProject,
} from "../project/index.js";
import { StateStore } from "../state/sqlite/store.js";
import { shownPath } from "../user-path.js";

/**
 * What of a command's workplace (cli/workplace.ts) the rule reads: said here rather than imported, as
 * the workplace applies the rule when it is made.
 */
export interface AnchoredState {
  readonly anchor: Anchor;
  readonly statePath: string;
  readonly stateFrom: string;
  readonly storeUrl?: string;
}

/** A state file other than the one a command uses, and the output folder that goes with it. */
interface OtherState {
  readonly statePath: string;
  readonly outDir: string;
  /** The anchor it belongs to; undefined for the old default under the current folder. */
  readonly anchor?: Anchor;
}

/**
 * The state and output folder of `anchor` as its own runs use them, or undefined for a project on
 * a shared store (its jobs are not in a file) or with a project file that cannot be read.
 */
function stateOfAnchor(anchor: Anchor): OtherState | undefined {
  if (anchor.kind !== "project") {
    return {
      statePath: join(anchor.dir, PROJECT_DEFAULTS.state),
      outDir: join(anchor.dir, PROJECT_DEFAULTS.out),
      anchor,
    };
  }
  try {
    const file = join(anchor.dir, PROJECT_FILE_NAME);
    const project = readProject(file, file);
    if (project.store !== undefined) return undefined;
    return { statePath: project.statePath, outDir: project.outDir, anchor };
  } catch {
    // A broken project file above is reported by the runs of its own manifests.
    return {
      statePath: join(anchor.dir, PROJECT_DEFAULTS.state),
      outDir: join(anchor.dir, PROJECT_DEFAULTS.out),
      anchor,
    };
  }
}

/** The states of the projects and states strictly above `dir`, nearest first. */
function statesAbove(dir: string): OtherState[] {
  const up = dirname(dir);
  if (up === dir) return [];
  return [...anchorsFrom(up)].flatMap((anchor) => stateOfAnchor(anchor) ?? []);
}

/** Of `states`, the first (not `own`) whose file exists and has work of `names`, with those names. */
function firstWithWork(
  states: readonly OtherState[],
  own: string | undefined,
  names: readonly string[],
): { state: OtherState; known: string[] } | undefined {
  const seen = new Set<string>();
  for (const state of states) {
    const path = resolve(state.statePath);
    if (seen.has(path) || !existsSync(path) || (own !== undefined && sameFile(path, own))) continue;
    seen.add(path);
    const known = StateStore.manifestsWithWork(path, names).sort();
    if (known.length > 0) return { state, known };
  }
  return undefined;
}

function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** "the state X", or "the state X of the project Y" when a project file names it. */
function ofAnchor(state: OtherState, cwd: string): string {
  const named = `the state ${shownPath(cwd, state.statePath)}`;
  return state.anchor?.kind === "project" ? `${named} of ${describeAnchor(state.anchor, cwd)}` : named;
}

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(", ");

/**
 * Refuses a command whose state (chosen by its anchor, not by --state or REEL_STATE) is not the one
 * that has work of these manifests: the old default in the current folder, or a state above.
 */
export function refusePassedOverStates(
  place: AnchoredState,
  cwd: string,
  manifestNames: readonly string[],
): void {
  const message = passedOverMessage(place, cwd, manifestNames);
  if (message !== undefined) throw new UsageError(message);
}

/** Why refusePassedOverStates refuses, or undefined (a watch skips such a manifest until fixed). */
export function passedOverMessage(
  place: AnchoredState,
  cwd: string,
  manifestNames: readonly string[],
): string | undefined {
  if (place.stateFrom !== "anchor" || place.storeUrl !== undefined || manifestNames.length === 0) {
    return undefined;
  }
  const shown = (path: string): string => shownPath(cwd, path);
  const old: OtherState = {
    statePath: resolve(cwd, DEFAULTS.statePath),
    outDir: resolve(cwd, DEFAULTS.outDir),
  };
  const found = firstWithWork([old, ...statesAbove(place.anchor.dir)], place.statePath, manifestNames);
  if (!found) return undefined;
  const { state, known } = found;
  if (state.anchor === undefined) {
    return `the state in the current folder, ${DEFAULTS.statePath}, has work of ${quoted(known)}, but these manifests' state is ${shown(place.statePath)} (${place.anchor.kind === "new" ? "new" : "found above them"}): running on would pay for that work again. Go on with the old one (--state ${DEFAULTS.statePath} --out ${DEFAULTS.outDir}), or move it beside the manifests (the whole .reel folder, and out), or write a project file with 'reel init'.`;
  }
  const ownProject = place.anchor.kind === "project" ? join(place.anchor.dir, PROJECT_FILE_NAME) : undefined;
  return `the state ${shown(state.statePath)} above has work of ${quoted(known)}, but these manifests belong to ${describeAnchor(place.anchor, cwd)}, whose state is ${shown(place.statePath)}${existsSync(place.statePath) ? "" : " (new)"}: running on would pay for that work again. Go on with the state above (--state ${shown(state.statePath)} --out ${shown(state.outDir)})${ownProject ? `, or delete ${shown(ownProject)} (they then belong to ${describeAnchor(state.anchor, cwd)} again)` : ""}; to start anew all the same, give --state ${shown(place.statePath)}.`;
}

/**
 * `reel init DIR` over manifests a state above has run: the new project would anchor them to a new
 * state, and their next run would pay for that work again. Refused before anything is written.
 */
export function refuseInitOverRunManifests(dir: string, cwd: string, manifestNames: readonly string[]): void {
  if (manifestNames.length === 0) return;
  const found = firstWithWork(statesAbove(dir), undefined, manifestNames);
  if (!found) return;
  const { state, known } = found;
  throw new UsageError(
    `${ofAnchor(state, cwd)} has work of ${quoted(known)}, manifests under ${shownPath(cwd, dir)}: a project there would give them a new state, and their next run would pay for that work again. Nothing was written. Run them as they are: their runs use that state, from any folder.`,
  );
}
