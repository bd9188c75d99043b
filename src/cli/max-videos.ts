// `--max-videos N` of the commands that read manifests: the most videos a manifest, and the
// manifests of one run together, may make (src/manifest/expand/video-count.ts). The flag, then
// REEL_MAX_VIDEOS, then the project's maxVideos, then the default.
import { join } from "node:path";
import { DEFAULTS } from "../defaults.js";
import { type Project, PROJECT_FILE_NAME, readProject } from "../project/index.js";
import { shownPath } from "../user-path.js";
import type { CliIO, OptionsConfig, ParsedArgs } from "./command.js";
import { positiveInteger } from "./service-options.js";
import { envSetting, flagValue } from "./workplace.js";

export const MAX_VIDEOS_OPTION: OptionsConfig = { "max-videos": { type: "string" } };

/** The option's lines of a usage text whose descriptions start at `column`. */
export function maxVideosUsage(column: number): string {
  const pad = " ".repeat(column);
  return [
    `  ${"--max-videos N".padEnd(column - 2)}the most videos a manifest, and a run's manifests together,`,
    `${pad}may make (matrices times takes, counted before they are expanded;`,
    `${pad}env REEL_MAX_VIDEOS, reel.yaml's maxVideos; default ${DEFAULTS.maxVideos})`,
  ].join("\n");
}

/** The limit for manifests of `project` (the one their command uses, if any). */
export function maxVideosOf(args: ParsedArgs, io: CliIO, project: Project | undefined): number {
  const flag = flagValue(args.values, "max-videos");
  const raw = flag ?? envSetting(io.env, "REEL_MAX_VIDEOS");
  if (raw === undefined) return project?.maxVideos ?? DEFAULTS.maxVideos;
  return positiveInteger(flag === undefined ? "REEL_MAX_VIDEOS" : "--max-videos", raw);
}

/**
 * The limit for a command that uses no state (`validate`), whose manifests may sit in several
 * projects (`projectRoots`): the smallest any of them sets, so that what validates here is not
 * refused by the run of one of them.
 */
export function maxVideosOfRoots(args: ParsedArgs, io: CliIO, projectRoots: readonly string[]): number {
  const limits = projectRoots.map((root) => {
    const file = join(root, PROJECT_FILE_NAME);
    return maxVideosOf(args, io, readProject(file, shownPath(io.cwd, file)));
  });
  return limits.length > 0 ? Math.min(...limits) : maxVideosOf(args, io, undefined);
}
