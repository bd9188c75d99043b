// Campaigns from a spreadsheet: a video's `rows: ./leads.csv` makes one video per row of the CSV
// (times its matrix, if any), every column a placeholder `{first_name}` used as a matrix's are
// (matrix.ts expands both). A spreadsheet's cells are all texts, so a cell that is a field's whole
// value takes that field's type here (a voice a whole number); a text stays a text, "007" and "2024"
// included. The id names the column(s) whose values are unique (`welcome-{lead_id}`): a job's
// identity is then its row's key, not its place in the file, so reordering, inserting or deleting
// rows changes no other job.
import path from "node:path";
import type { PathSegment } from "../parse/locate.js";
import type { RowsTable } from "./rows-file.js";
import { isRecord } from "../../values.js";

type Converted = { ok: true; value: string | number | boolean } | { ok: false; message: string };

/** The fields that take a whole number, and what one is called in a message. */
const WHOLE_NUMBER_FIELDS: Readonly<Record<string, string>> = {
  voice: "a voice id (a whole number)",
  asset: "an asset id (a whole number)",
  duration: "a duration (a whole number of seconds)",
  seed: "a seed (a whole number)",
  takes: "a number of takes (a whole number)",
};
const BOOLEAN_FIELDS = new Set(["enablePromptEnhancement"]);

/** A cell that is the whole value of the field at `where`, as that field's type. */
export function convertCell(where: readonly PathSegment[], cell: string): Converted {
  const field = String(where[where.length - 1]);
  const number = WHOLE_NUMBER_FIELDS[field];
  if (number !== undefined) {
    const digits = cell.trim();
    if (!/^\d+$/.test(digits))
      return { ok: false, message: `${field} ${JSON.stringify(cell)} is not ${number}` };
    const value = Number(digits);
    // Ids past 2^53 stay digits: the loader checks them as int64.
    return { ok: true, value: Number.isSafeInteger(value) ? value : digits };
  }
  if (BOOLEAN_FIELDS.has(field)) {
    const word = cell.trim().toLowerCase();
    if (word === "true" || word === "false") return { ok: true, value: word === "true" };
    return { ok: false, message: `${field} ${JSON.stringify(cell)} is not true or false` };
  }
  return { ok: true, value: cell };
}

const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The columns of `header` that `template` names, in the header's order. */
export function columnsIn(template: string, header: readonly string[]): string[] {
  const named = new Set(
    [...template.matchAll(PLACEHOLDER)].flatMap((m) => (m[1] === undefined ? [] : [m[1]])),
  );
  return header.filter((column) => named.has(column));
}

/**
 * The fields of a video of `rows:` as written (its defaults' chunks in) that name a column, by the
 * request field they make, as `plan --explain` names fields: `chunks[0].text`, `source`,
 * `chunks[0].speech.voice`. Read once per video as written; every row's jobs share it.
 */
export function rowFieldTemplates(video: unknown, header: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const add = (field: string, value: unknown): void => {
    if (isRecord(value) && "asset" in value) value = value.asset;
    if (typeof value === "string" && columnsIn(value, header).length > 0) out.set(field, value);
  };
  if (!isRecord(video)) return out;
  for (const key of ["model", "resolution", "aspectRatio", "seed", "source"]) add(key, video[key]);
  if (Array.isArray(video.chunks))
    video.chunks.forEach((chunk: unknown, j) => {
      if (!isRecord(chunk)) return;
      for (const key of ["duration", "text", "audio", "enablePromptEnhancement"])
        add(`chunks[${j}].${key}`, chunk[key]);
      if (isRecord(chunk.speech)) {
        add(`chunks[${j}].speech.voice`, chunk.speech.voice);
        add(`chunks[${j}].speech.text`, chunk.speech.text);
      }
    });
  return out;
}

/** Why `id` can't name the videos of `table`'s rows, if it can't: it must name a column. */
export function rowsIdProblem(id: unknown, table: RowsTable): string | undefined {
  if (typeof id !== "string") return undefined;
  const named = [...id.matchAll(PLACEHOLDER)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
  if (named.some((name) => table.header.includes(name))) return undefined;
  return `the id of a video with rows must name a column whose values are unique in ${path.basename(table.file)}, so that each row keeps its job when rows move, e.g. id: ${id.replace(/\{[^}]*\}/g, "") || "video"}-{${table.header[0]}}; its columns: ${table.header.join(", ")}`;
}
