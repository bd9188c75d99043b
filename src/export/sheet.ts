// The delivery sheet: one line per exported video, so that a delivery joins back to its source (a
// spreadsheet's key column, a matrix's values). delivery.jsonl keeps every value exact;
// delivery.csv is for spreadsheet programs, so a cell one would run as a formula is kept text.
import type { SheetFormat } from "../export-rules.js";
import { takeOf } from "../manifest/expand/takes.js";
import { decisionFieldsOf } from "../output/decision-fields.js";
import type { ExportItem, VariableValue } from "./choose.js";
import { readStoredSpec } from "../stored-spec.js";

export const SHEET_NAMES: Readonly<Record<SheetFormat, string>> = {
  csv: "delivery.csv",
  jsonl: "delivery.jsonl",
};

export const FIXED_COLUMNS = [
  "file",
  "manifest",
  "id",
  "take",
  "taskId",
  "seed",
  "model",
  "resolution",
  "aspectRatio",
  "seconds",
  "bytes",
  "sha256",
  "decision",
  "reviewer",
  "decidedAt",
  "spoken",
] as const;

/** A variable named like a fixed column is written under this prefix (`var_id`). */
export const VARIABLE_PREFIX = "var_";

type Cell = string | number | boolean | null | readonly string[];

export interface SheetLine {
  readonly item: ExportItem;
  /** Relative to DIR. */
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface Sheet {
  readonly columns: readonly string[];
  readonly rows: readonly Record<string, Cell>[];
}

/** The sheet of `lines`: the fixed columns, then each variable any line has, in first-seen order. */
export function buildSheet(lines: readonly SheetLine[]): Sheet {
  const fixed = new Set<string>(FIXED_COLUMNS);
  const columnOf = (name: string): string => (fixed.has(name) ? `${VARIABLE_PREFIX}${name}` : name);
  const variableColumns = new Set<string>();
  for (const line of lines)
    for (const name of Object.keys(line.item.variables)) variableColumns.add(columnOf(name));
  const rows = lines.map(({ item, file, bytes, sha256 }) => {
    const { row } = item;
    const spec = readStoredSpec(row.spec_json);
    const decision = decisionFieldsOf(item.decision);
    const cells: Record<string, Cell> = {
      file,
      manifest: row.manifest,
      id: row.video_id,
      take: takeOf(row.video_id).n,
      taskId: row.task_id,
      seed: spec.seed ?? null,
      model: row.model,
      resolution: spec.resolution ?? null,
      aspectRatio: spec.aspectRatio ?? null,
      seconds: row.seconds,
      bytes,
      sha256,
      decision: decision.decision,
      reviewer: decision.reviewer,
      decidedAt: decision.decidedAt,
      spoken: spec.spoken,
    };
    for (const column of variableColumns) cells[column] = null;
    for (const [name, value] of Object.entries(item.variables) as [string, VariableValue][])
      cells[columnOf(name)] = value;
    return cells;
  });
  return { columns: [...FIXED_COLUMNS, ...variableColumns], rows };
}

export function sheetJsonl(sheet: Sheet): string {
  return sheet.rows.map((row) => `${JSON.stringify(row)}\n`).join("");
}

/** RFC 4180, with CRLF line ends (what spreadsheet programs write), and formulas kept text. */
export function sheetCsv(sheet: Sheet): string {
  const lines = [
    sheet.columns.map(csvCell),
    ...sheet.rows.map((row) => sheet.columns.map((c) => csvCell(row[c] ?? null))),
  ];
  return lines.map((cells) => `${cells.join(",")}\r\n`).join("");
}

/** What starts a formula in a spreadsheet program (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(value: Cell): string {
  let text =
    value === null
      ? ""
      : Array.isArray(value)
        ? value.join("\n")
        : String(value as string | number | boolean);
  // A leading single quote makes the program show the rest as text, and run nothing.
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
