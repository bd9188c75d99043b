// How many videos a manifest makes (a matrix's combinations times takes, summed), counted before
// anything is expanded, and the limit on them: a few kilobytes of YAML can stand for millions of
// videos, which would take minutes and gigabytes to expand (and stall a watcher) before a refusal.
// One limit applies to each manifest and to the manifests of one run (or one watcher's load)
// together; --max-videos, REEL_MAX_VIDEOS or reel.yaml's maxVideos raise it.
import { countMatrixVideos, type Combination, type RowsOfVideo } from "./matrix.js";
import { inherit } from "../plan/normalize.js";
import { TAKES_MAX } from "../validate/schema.js";
import { isRecord } from "../../values.js";

/** Takes the schema refuses count as one: the manifest is refused for them anyway. */
const validTakes = (value: unknown): number =>
  typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= TAKES_MAX ? value : 1;

const WHOLE_PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * The videos each video as written in `raw` makes, by index: its takes, times its matrix's
 * combinations (those left in by `exclude`) for a matrix video. `raw` as parsed, defaults' chunks in.
 */
export function countVideos(raw: unknown, rowsOf: ReadonlyMap<number, RowsOfVideo> = new Map()): number[] {
  if (!isRecord(raw) || !Array.isArray(raw.videos)) return [];
  const defaults = isRecord(raw.defaults) ? raw.defaults : {};
  return raw.videos.map((video: unknown, index) => {
    if (!isRecord(video)) return 1;
    const takes = inherit(video.takes, defaults.takes);
    // `takes: "{n}"` takes each combination's (or row's) value of n.
    const placeholder = typeof takes === "string" ? WHOLE_PLACEHOLDER.exec(takes)?.[1] : undefined;
    const rows = rowsOf.get(index);
    if ("rows" in video) {
      if (rows === undefined || !("header" in rows)) return 0;
      const column = placeholder === undefined ? -1 : rows.header.indexOf(placeholder);
      const perRow =
        column < 0
          ? (): number => validTakes(takes)
          : (values: readonly string[]) => validTakes(Number(values[column]));
      const combos = "matrix" in video ? countMatrixVideos(video, 1) : 1;
      return rows.rows.reduce((sum, row) => sum + combos * perRow(row.values), 0);
    }
    if (!("matrix" in video)) return validTakes(takes);
    return countMatrixVideos(
      video,
      placeholder === undefined
        ? validTakes(takes)
        : (values: Combination) => validTakes(values[placeholder]),
    );
  });
}

/** The index of the video at which the running count of `counts` passes `room`, if it does. */
export function passedAt(counts: readonly number[], room: number): number | undefined {
  let sum = 0;
  for (let i = 0; i < counts.length; i++) {
    sum += counts[i]!;
    if (sum > room) return i;
  }
  return undefined;
}

const raise = (total: number): string =>
  `raise the limit with --max-videos ${total} (or maxVideos: ${total} in reel.yaml)`;

/** A manifest that makes more than the limit: said at the video that passes it. */
export function manifestOverLimit(total: number, limit: number): string {
  return `this manifest makes ${total} videos (matrices times takes), over the limit of ${limit} per manifest, passed at this video: split the manifest, or ${raise(total)}`;
}

/** A manifest that takes its run's manifests past the limit together: said at the video that passes it. */
export function runOverLimit(runTotal: number, own: number, limit: number): string {
  return `the manifests of this run make ${runTotal} videos (this one ${own}), over the limit of ${limit} per run, passed at this video: run fewer manifests at once, or ${raise(runTotal)}`;
}
