// Where a problem of an expanded matrix video is said (issue 19): at its template's field, naming the
// expanded video and its combination, and once for every combination that has the same problem
// there ("promo.yaml:14:15: promo-de-ben: actor-2 takes resolution 720p or 1080p, not 540p
// (lang=de, face=ben)" rather than the same line for each of 108 videos).
import type { PathSegment } from "./locate.js";
import type { Expansion, VideoOrigin } from "./matrix.js";

export { expandMatrices } from "./matrix.js";

/** The path in the manifest as written of `path` in the expanded one (the same but for the video index). */
export function templatePath(expansion: Expansion, path: readonly PathSegment[]): PathSegment[] {
  const origin = originOf(expansion, path);
  return origin ? ["videos", origin.index, ...path.slice(2)] : [...path];
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
   * expanded one, with its id and combination, or undefined when the same template field already
   * has the same problem (from another combination).
   */
  say(path: readonly PathSegment[], message: string): string | undefined {
    const origin = originOf(this.expansion, path);
    if (origin?.combination === undefined) return message;
    const key = `${templatePath(this.expansion, path).join("/")}\n${message}`;
    if (this.said.has(key)) return undefined;
    this.said.add(key);
    const videos = (this.value as { videos?: unknown[] } | undefined)?.videos;
    const id = (videos?.[Number(path[1])] as { id?: unknown } | undefined)?.id;
    return `${typeof id === "string" ? `${id}: ` : ""}${message} (${origin.combination})`;
  }
}
