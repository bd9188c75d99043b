// The rows of the videos with `rows:` (rows-file.ts reads each CSV), the cell a field of a row's
// video took its value from (a problem of it is said there), and each job's row for plan --explain.
import path from "node:path";
import type { PathSegment } from "../parse/locate.js";
import type { RowsOfVideo, VideoOrigin } from "./matrix.js";
import { PROBLEM_CODES } from "../problem.js";
import { rowFieldTemplates } from "./rows.js";
import { readRowsFile, type RowsOptions, type RowsTable } from "./rows-file.js";
import type { RowOrigin } from "../types.js";
import { isRecord } from "../../values.js";

/** A video's `rows:` as written: the file and its options, or what is wrong with it. */
function rowsField(value: unknown): { file: string; options: RowsOptions } | string {
  const usage =
    'rows takes a CSV file relative to the manifest, e.g. rows: ./leads.csv, or rows: { file: ./leads.csv, delimiter: ";" }';
  if (typeof value === "string" && value !== "") return { file: value, options: {} };
  if (!isRecord(value) || typeof value.file !== "string" || value.file === "") return usage;
  const extra = Object.keys(value).filter((key) => key !== "file" && key !== "delimiter");
  if (extra.length > 0) return `rows takes file and delimiter, not ${extra.join(", ")}`;
  const { delimiter } = value;
  if (delimiter === undefined) return { file: value.file, options: {} };
  if (typeof delimiter !== "string" || [...delimiter].length !== 1 || /["\r\n]/.test(delimiter))
    return `rows delimiter is one character, e.g. ";" or "\\t" (not a quote or a line break)`;
  return { file: value.file, options: { delimiter } };
}

/**
 * The rows of every video of `value` that has `rows:`, read (rows-file.ts), by video index. Each CSV
 * there, readable under the read rule, is added to `files` (a watcher follows them).
 */
export async function readRowsOfVideos(
  value: unknown,
  dir: string,
  cwd: string,
  allowed: readonly string[],
  files: Set<string>,
): Promise<Map<number, RowsOfVideo>> {
  const out = new Map<number, RowsOfVideo>();
  const videos = isRecord(value) && Array.isArray(value.videos) ? value.videos : [];
  await Promise.all(
    videos.map(async (video: unknown, index) => {
      if (!isRecord(video) || !("rows" in video)) return;
      const at: PathSegment[] = ["videos", index, "rows"];
      const field = rowsField(video.rows);
      if (typeof field === "string") {
        out.set(index, { path: at, message: field, code: PROBLEM_CODES.invalidValue });
        return;
      }
      const read = await readRowsFile(field.file, dir, cwd, allowed, field.options);
      if (read.ok) files.add(read.table.file);
      else if (read.code !== PROBLEM_CODES.pathOutside && read.code !== PROBLEM_CODES.fileMissing)
        files.add(read.at?.file ?? path.resolve(dir, field.file));
      if (read.ok) out.set(index, read.table);
      else
        out.set(index, {
          path: at,
          message: read.message,
          code: read.code,
          ...(read.at ? { at: read.at } : {}),
          ...(read.code === PROBLEM_CODES.fileMissing ? { media: path.resolve(dir, field.file) } : {}),
        });
    }),
  );
  return out;
}

/** The placeholders `{name}` of a text. */
function placeholdersIn(text: string): string[] {
  return [...text.matchAll(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].flatMap((m) =>
    m[1] === undefined ? [] : [m[1]],
  );
}

/** The cell of `table`'s row a field written `template` took its value from, if one column. */
export function cellOf(template: unknown, table: RowsTable, row: RowsTable["rows"][number]) {
  if (typeof template !== "string") return undefined;
  const columns = placeholdersIn(template).filter((name) => table.header.includes(name));
  if (new Set(columns).size !== 1) return undefined;
  const column = table.header.indexOf(columns[0]!);
  return { column: columns[0]!, ...table.placeOf(row, column) };
}

/**
 * Each expanded video's CSV row, for plan --explain: one object per row (its jobs share it), the
 * field templates read once per video as written.
 */
export function rowOrigins(
  origins: readonly VideoOrigin[],
  written: unknown,
): (index: number) => RowOrigin | undefined {
  const videos = isRecord(written) && Array.isArray(written.videos) ? written.videos : [];
  const templates = new Map<number, Map<string, string>>();
  // A row's videos (its matrix's combinations) are next to each other: the last row's is enough.
  let last: { row: RowsTable["rows"][number]; made: RowOrigin } | undefined;
  return (index) => {
    const origin = origins[index];
    if (!origin?.row) return undefined;
    const { table, row } = origin.row;
    if (last?.row === row) return last.made;
    let fields = templates.get(origin.index);
    if (fields === undefined) {
      fields = rowFieldTemplates(videos[origin.index], table.header);
      templates.set(origin.index, fields);
    }
    last = { row, made: { file: table.file, line: row.line, header: table.header, templates: fields } };
    return last.made;
  };
}
