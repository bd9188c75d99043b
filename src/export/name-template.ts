// Delivery names (`--name TEMPLATE`): placeholders filled from each exported video, and every name
// checked before anything is written, as manifest paths are: relative, inside DIR, and a name every
// common file system takes (Windows' reserved names and characters included: a delivery folder is
// often copied to one).
import { UsageError } from "../errors.js";
import { takeOf } from "../manifest/takes.js";
import type { ExportItem } from "./choose.js";
import { specOf } from "./spec-fields.js";

export const DEFAULT_NAME = "{manifest}/{id}.mp4";

/** The placeholders every video has; the job's variables come after them. */
export const FIXED_PLACEHOLDERS = [
  "manifest",
  "id",
  "video",
  "take",
  "seed",
  "model",
  "resolution",
  "aspectRatio",
  "duration",
  "date",
] as const;

const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Each placeholder's text for `item`: the fixed ones, then its variables (a fixed one wins). */
export function placeholderValues(item: ExportItem): Record<string, string> {
  const { row } = item;
  const spec = specOf(row.spec_json);
  const take = takeOf(row.video_id);
  const finished = row.finished_at ?? row.downloaded_at ?? row.created_at;
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(item.variables)) values[name] = String(value);
  return Object.assign(values, {
    manifest: row.manifest,
    id: row.video_id,
    video: take.video,
    take: String(take.n),
    seed: spec.seed === undefined ? "" : String(spec.seed),
    model: row.model,
    resolution: spec.resolution ?? "",
    aspectRatio: spec.aspectRatio ?? "",
    duration: String(row.seconds),
    // The day the video was made, not today: a second export gives the same names.
    date: new Date(finished).toISOString().slice(0, 10),
  });
}

/** `template` filled from `values`; `{{` and `}}` write a brace. Unknown placeholders: UsageError. */
export function renderName(template: string, values: Readonly<Record<string, string>>, id: string): string {
  return template.replace(PLACEHOLDER, (whole, name: string | undefined) => {
    if (name === undefined) return whole[0]!;
    const value = values[name];
    if (value === undefined) {
      const known = Object.keys(values).map((n) => `{${n}}`);
      throw new UsageError(
        `--name ${JSON.stringify(template)}: ${id} has no {${name}}; the placeholders are ${known.join(" ")}`,
      );
    }
    return value;
  });
}

/** The names export writes itself in DIR: no video may take one. */
export const OWN_NAMES: ReadonlySet<string> = new Set([
  "delivery.csv",
  "delivery.jsonl",
  ".reel-export.json",
]);

const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
// eslint-disable-next-line no-control-regex
const REFUSED_CHARS = /[<>:"|?*\\\u0000-\u001f\u007f]/;
/** Most file systems take 255 bytes a name. */
const MAX_PART_BYTES = 255;

/** Why `name` (relative to DIR, "/" between folders) cannot be written, or undefined when it can. */
export function nameProblem(name: string): string | undefined {
  if (name === "") return "is empty";
  if (name.startsWith("/")) return "is an absolute path; names are relative to DIR";
  if (OWN_NAMES.has(name.toLowerCase())) return "is a name reel export keeps for itself";
  for (const part of name.split("/")) {
    if (part === "") return "has an empty folder name (a doubled or trailing /)";
    if (part === "." || part === "..") return `has "${part}": names stay inside DIR`;
    const bad = REFUSED_CHARS.exec(part);
    if (bad) return `has ${JSON.stringify(bad[0])}, which some file systems refuse in a name`;
    if (/[. ]$/.test(part)) return `has "${part}", ending with a dot or a space, which Windows drops`;
    if (RESERVED.test(part)) return `has "${part}", a name Windows reserves for a device`;
    if (Buffer.byteLength(part) > MAX_PART_BYTES) return `has a part longer than ${MAX_PART_BYTES} bytes`;
  }
  return undefined;
}
