// Where a problem of an expanded matrix video is said: at its template's field, naming the
// expanded video and its combination, and once for every combination that has the same problem
// there ("promo.yaml:14:15: promo-de-ben: actor-2 takes resolution 720p or 1080p, not 540p
// (lang=de, face=ben)" rather than the same line for each of 108 videos).
import type { PathSegment } from "../parse/locate.js";
import type { Expansion, VideoOrigin } from "./matrix.js";

export { expandMatrices } from "./matrix.js";

/**
 * The path in the manifest as written of `path` in the expanded one: the same but for the video
 * index, or in defaults for the chunks a video took from there.
 */
export function templatePath(expansion: Expansion, path: readonly PathSegment[]): PathSegment[] {
  const origin = originOf(expansion, path);
  if (!origin) return [...path];
  if (path[2] === "chunks" && expansion.inheritedChunks.has(origin.index))
    return ["defaults", "chunks", ...path.slice(3)];
  return ["videos", origin.index, ...path.slice(2)];
}

function originOf(expansion: Expansion, path: readonly PathSegment[]): VideoOrigin | undefined {
  if (path[0] !== "videos" || path.length < 2) return undefined;
  return expansion.origins[Number(path[1])];
}

export class ExpansionProblems {
  private readonly said = new Set<string>();

  constructor(
    private readonly expansion: Expansion,
    /** The expanded manifest (its videos' ids name them). */
    private readonly value: unknown,
  ) {}

  /**
   * The message of a problem at `path` of the expanded manifest: as given for a written video; for an
   * expanded one (or in the chunks a video took from defaults), with its id (and combination), or
   * undefined when the same field as written already has the same problem (from another video).
   */
  say(path: readonly PathSegment[], message: string): string | undefined {
    const origin = originOf(this.expansion, path);
    const written = templatePath(this.expansion, path);
    const key = `${written.join("/")}\n${message}`;
    // A problem of defaults' own chunks is not said again for each video that takes them.
    if (path[0] === "defaults") this.said.add(key);
    const inDefaults = origin !== undefined && written[0] === "defaults";
    if (origin?.combination === undefined && !inDefaults) return message;
    if (this.said.has(key)) return undefined;
    this.said.add(key);
    const videos = (this.value as { videos?: unknown[] } | undefined)?.videos;
    const id = (videos?.[Number(path[1])] as { id?: unknown } | undefined)?.id;
    const combination = origin?.combination === undefined ? "" : ` (${origin.combination})`;
    return `${typeof id === "string" ? `${id}: ` : ""}${message}${combination}`;
  }
}
