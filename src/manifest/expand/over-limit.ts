// The video limit applied to one file as it is loaded (video-count.ts counts): a file that passes it
// is refused before its videos are expanded.
import { locate } from "../parse/locate.js";
import type { FileOutcome } from "../load-context.js";
import type { RowsOfVideo } from "./matrix.js";
import type { ParsedYaml } from "../parse/parse-yaml.js";
import { PROBLEM_CODES } from "../problem.js";
import { countVideos, manifestOverLimit, passedAt } from "./video-count.js";
import { isRecord } from "../../values.js";
import { nameFromFileName } from "../parse/manifest-file.js";
import { isUsableName } from "../validate/file-checks.js";

/** The videos of one load's manifests, counted against the limit (video-count.ts). */
export interface VideoTally {
  readonly limit: number;
  /** Of the manifests let through. */
  admitted: number;
  /** Of every manifest counted, let through or not: the run's total, as said. */
  all: number;
}

/**
 * Counts the videos of `value` (parsed, defaults' chunks in) against the limit, before anything is
 * expanded: what a file over it returns instead of its manifest, or undefined when it fits.
 */
export function overVideoLimit(
  parsed: ParsedYaml,
  value: unknown,
  tally: VideoTally,
  file: string,
  rowsOf: ReadonlyMap<number, RowsOfVideo>,
): FileOutcome | undefined {
  const counts = countVideos(value, rowsOf);
  const total = counts.reduce((sum, n) => sum + n, 0);
  tally.all += total;
  // Where the fast parser saw the video start: locate() would build the whole document, which for
  // a large file costs more than the count saves.
  const top = isRecord(parsed.value) ? parsed.value : {};
  const videoAt = (i: number) => {
    const video: unknown = Array.isArray(top.videos) ? top.videos[i] : undefined;
    return (isRecord(video) ? parsed.positionOfObject(video) : undefined) ?? locate(parsed, ["videos", i]);
  };
  // Still named (by its name: or, without one, by its file's name, as a manifest that fits is), so
  // that `status` and `clean` find the jobs it ran under a higher limit.
  const derived = top.name === undefined ? nameFromFileName(file) : undefined;
  const name =
    typeof top.name === "string"
      ? { name: { name: top.name, position: () => locate(parsed, ["name"]) } }
      : derived !== undefined && isUsableName(derived)
        ? { name: { name: derived, position: () => ({ line: 1, col: 1 }) } }
        : {};
  const passed = passedAt(counts, tally.limit);
  if (passed !== undefined) {
    const message = manifestOverLimit(total, tally.limit);
    return { problems: [{ file, ...videoAt(passed), message, code: PROBLEM_CODES.tooManyVideos }], ...name };
  }
  const passedInRun = passedAt(counts, tally.limit - tally.admitted);
  if (passedInRun !== undefined)
    return { problems: [], overRun: { count: total, ...videoAt(passedInRun) }, ...name };
  tally.admitted += total;
  return undefined;
}
