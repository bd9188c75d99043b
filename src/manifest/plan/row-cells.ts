// `plan --explain` for a job of `rows:`: which cell of its CSV row a changed field came from. The
// state keeps the request sent, not the row it was made from, so the columns are found from the
// field's old value: it must read as the field's template with some values of its columns (else
// the manifest's template changed, and no cell is named); of several columns, the one that alone
// explains the old value, else every column the template names.
import type { RowOrigin } from "../types.js";
import { columnsIn } from "../expand/rows.js";

/** A changed field's old value, as its template would have made it. */
export interface OldValue {
  readonly text: string;
  /** A file's path (absolute, links followed): the template's relative path matches its end. */
  readonly isPath?: boolean;
}

/** Where a change came from: the row's file and line, and the column(s). */
export interface CellSource {
  readonly field: string;
  /** As the user names it (relative to the folder reel was started in). */
  readonly file: string;
  readonly line: number;
  readonly columns: readonly string[];
}

const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** The columns of `row` a change of `field` (old value `old`) came from, or undefined if none. */
export function changedColumns(
  row: RowOrigin,
  variables: Readonly<Record<string, string | number | boolean>> | undefined,
  field: string,
  old: OldValue | undefined,
): readonly string[] | undefined {
  const template = row.templates.get(field);
  if (template === undefined || old === undefined) return undefined;
  const columns = columnsIn(template, row.header);
  const reads = (open: readonly string[]): boolean =>
    patternOf(template, variables ?? {}, new Set(open), old.isPath === true).test(old.text);
  if (!reads(columns)) return undefined;
  if (columns.length === 1) return columns;
  const alone = columns.filter((column) => reads([column]));
  return alone.length === 1 ? alone : columns;
}

/** "column "script"", or "columns "name", "city"". */
export function columnsSaid(columns: readonly string[]): string {
  return `${columns.length === 1 ? "column" : "columns"} ${columns.map((c) => JSON.stringify(c)).join(", ")}`;
}

/**
 * `template` as a pattern: the `open` placeholders any text (one text each, however often named),
 * the others their values now. A path's template may match the end of the old path.
 */
function patternOf(
  template: string,
  values: Readonly<Record<string, string | number | boolean>>,
  open: ReadonlySet<string>,
  isPath: boolean,
): RegExp {
  const text = isPath ? template.replace(/^(?:\.{1,2}\/)+/, "") : template;
  const groups = new Map<string, number>();
  let source = "";
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    source += escape(text.slice(last, match.index));
    last = match.index + match[0].length;
    const name = match[1];
    if (name === undefined) source += escape(match[0][0]!);
    else if (open.has(name)) {
      const group = groups.get(name);
      if (group !== undefined) source += `\\${group}`;
      else {
        groups.set(name, groups.size + 1);
        source += "([\\s\\S]*?)";
      }
    } else source += name in values ? escape(String(values[name])) : "[\\s\\S]*?";
  }
  source += escape(text.slice(last));
  return new RegExp(`${isPath ? "^(?:[\\s\\S]*[\\\\/])?" : "^"}${source}$`);
}
