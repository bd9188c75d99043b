// What `reel export` may be told, by its flags or by `export:` in reel.yaml (the flag wins), and
// which names it may write: one place for both, so that a value the file takes is one the flag
// takes and a template is judged alike wherever it is given. src/export/ applies them; the
// project file (below it) checks reel.yaml's export: with them.

/** `--status` and `export.status`: the approved takes (the default), or every finished video. */
export const STATUS_CHOICES = ["approved", "success"] as const;
export type ExportScope = (typeof STATUS_CHOICES)[number];
export const DEFAULT_STATUS: ExportScope = "approved";

/** `--sheet` and `export.sheet`: one sheet, or both (the default). */
export const SHEET_CHOICES = ["csv", "jsonl", "both"] as const;
export type SheetChoice = (typeof SHEET_CHOICES)[number];
export type SheetFormat = Exclude<SheetChoice, "both">;
export const DEFAULT_SHEET: SheetChoice = "both";

export function sheetsOf(choice: SheetChoice): SheetFormat[] {
  return choice === "both" ? ["csv", "jsonl"] : [choice];
}

export function isChoice<T extends string>(choices: readonly T[], value: unknown): value is T {
  return (choices as readonly unknown[]).includes(value);
}

/** "csv, jsonl or both", as a message lists the choices. */
export function choicesSaid(choices: readonly string[]): string {
  return choices.length === 1 ? choices[0]! : `${choices.slice(0, -1).join(", ")} or ${choices.at(-1)!}`;
}

/** `--name` and `export.name`: each video's name in DIR. */
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

/** A placeholder, or `{{` / `}}` (a brace). */
export const NAME_PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

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

/**
 * Why `name` (relative to DIR, "/" between folders) cannot be written, or undefined when it can:
 * relative, inside DIR, and a name every common file system takes (Windows' reserved names and
 * characters included: a delivery folder is often copied to one).
 */
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

/**
 * Why `template` can make no valid name whatever its placeholders hold (outside DIR, a character
 * or name a file system refuses in its own text), or undefined: checked where it is written, before
 * any video is named. Each placeholder stands for a plain word here; what they hold is checked for
 * each video (nameProblem).
 */
export function templateProblem(template: string): string | undefined {
  return nameProblem(
    template.replace(NAME_PLACEHOLDER, (whole, name: string | undefined) =>
      name === undefined ? whole[0]! : "x",
    ),
  );
}
