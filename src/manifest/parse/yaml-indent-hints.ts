// Indentation mistakes, read against the text and the parsed document (yaml-hints.ts asks): a line
// indented more than its block allows or between two columns, and an over-indented line the `yaml`
// package reports on the key above it.
import type { Document } from "yaml";
import { isSeq, visit, yamlModel } from "../../yaml-model.js";
import type { SourceLine, SourceLines } from "./source-lines.js";

/** Fields whose value is a list: `chunks: 5` with a list under it is a value and a list at once. */
const LIST_FIELDS = new Set(["videos", "chunks"]);

/** A column as said to the user (1-based). */
export const col = (column: number): string => `column ${column + 1}`;

/** A mistake recognised, at its place, with the lines whose errors it explains. */
export interface Diagnosis {
  readonly offset: number;
  readonly message: string;
  /** The lines (0-based, inclusive) whose errors follow from this mistake: not reported again. */
  readonly covers: readonly [number, number];
}

/** The line before `line` that holds the block `line` is in: the nearest one indented less. */
function parentLine(lines: SourceLines, line: SourceLine): SourceLine | undefined {
  for (let i = line.index - 1; i >= 0; i--) {
    const candidate = lines.lines[i]!;
    if (!candidate.blank && candidate.indent < line.indent) return candidate;
  }
  return undefined;
}

/** The nearest line before `line` with `key:` at `column`: a field `line` should line up with. */
function siblingAt(lines: SourceLines, line: SourceLine, column: number): SourceLine | undefined {
  for (let i = line.index - 1; i >= 0; i--) {
    const candidate = lines.lines[i]!;
    if (candidate.blank) continue;
    if (candidate.indent < column && candidate.keyColumn !== column) return undefined;
    if (candidate.keyColumn === column && candidate.pair) return candidate;
  }
  return undefined;
}

const what = (line: SourceLine): string =>
  line.pair ? `"${line.pair.key}:"` : line.dashes > 0 ? "this list item" : "this line";

/** `line` indented wrongly for the block it is in: more than its parent allows, or between columns. */
export function indentation(
  doc: Document.Parsed,
  lines: SourceLines,
  line: SourceLine,
  code: string,
  message: string,
): Diagnosis | undefined {
  const covers = [line.index, lines.blockEnd(line)] as const;
  const offset = line.start + line.indent;
  if (code === "BAD_INDENT" && /^All sequence items must start at the same column/.test(message)) {
    const expected = listColumn(doc, lines, line);
    if (expected !== undefined) {
      return {
        offset,
        message: `this list item's "-" is in ${col(line.indent)}, the "-" of the items before it in ${col(expected)}: line them up`,
        covers,
      };
    }
  }
  const parent = parentLine(lines, line);
  if (!parent) return undefined;
  if (line.indent < parent.keyColumn) {
    // Between the "-" of a list item and its fields.
    const sibling = siblingAt(lines, line, parent.keyColumn) ?? parent;
    return {
      offset,
      message: `${what(line)} is in ${col(line.indent)}, between the "-" of its list item (${col(parent.indent)}) and its fields (${col(parent.keyColumn)}): start it in ${col(parent.keyColumn)}, as ${what(sibling)}`,
      covers,
    };
  }
  if (line.indent === parent.keyColumn) return undefined;
  return overIndented(lines, parent, line);
}

/** Over-indentation reported on the line above the mistake (on the key whose value it seems to continue). */
export function nextLineIndentation(
  lines: SourceLines,
  line: SourceLine,
  code: string,
): Diagnosis | undefined {
  if (code !== "BLOCK_AS_IMPLICIT_KEY" && code !== "MULTILINE_IMPLICIT_KEY" && code !== "MISSING_CHAR") {
    return undefined;
  }
  const next = lines.nextContent(line.index);
  return next && next.indent > line.keyColumn ? overIndented(lines, line, next) : undefined;
}

/**
 * `line` indented more than the key of `parent` (the line above it, indented less), whose value is
 * on its own line: the line cannot belong to that key, so one of the two is out of place.
 */
function overIndented(lines: SourceLines, parent: SourceLine, line: SourceLine): Diagnosis | undefined {
  const pair = parent.pair;
  if (!pair || !hasInlineValue(pair.value)) return undefined;
  const offset = line.start + line.indent;
  // The mistake's lines: the parent's block (an item's fields all misplaced are one mistake).
  const covers = [parent.index, Math.max(lines.blockEnd(parent), lines.blockEnd(line))] as const;
  if (line.dashes > 0 && LIST_FIELDS.has(pair.key)) {
    return {
      offset: parent.start + pair.valueColumn,
      message: `"${pair.key}:" has both a value (${pair.value}) and a list under it: remove the value, so that the list is "${pair.key}"`,
      covers,
    };
  }
  if (line.dashes > 0) {
    const list = previousListItem(lines, line);
    const lineUp = list
      ? `: line its "-" up with the one on line ${list.index + 1} (${col(list.indent)})`
      : "";
    return {
      offset,
      message: `this list item is indented more than "${pair.key}:" above it, which already has a value${lineUp}`,
      covers,
    };
  }
  if (line.pair && parent.dashes > 0 && siblingsAt(lines, line) > 1) {
    // `- duration: 5` with every field under it one column further: the item's first line is off.
    return {
      offset: parent.start + parent.keyColumn,
      message: `"${pair.key}:" is in ${col(parent.keyColumn)} but the fields under it in ${col(line.indent)}: the fields of a list item start in one column; move "- ${pair.key}:" or the fields below it to line them up`,
      covers,
    };
  }
  if (line.pair) {
    return {
      offset,
      message: `"${line.pair.key}:" is indented more than "${pair.key}:" above it, which already has a value, so YAML reads it as part of that value: start it in ${col(parent.keyColumn)}, as "${pair.key}:"`,
      covers,
    };
  }
  return {
    offset,
    message: `this line is indented more than "${pair.key}:" above it, so YAML reads it as more of that value, where ": " is not allowed: if it belongs to the value, put the whole value in quotes; if not, start it in ${col(parent.keyColumn)}`,
    covers,
  };
}

/** How many `key:` lines follow from `line` on, in its column, before a line indented less. */
function siblingsAt(lines: SourceLines, line: SourceLine): number {
  let count = 0;
  for (let i = line.index; i < lines.lines.length; i++) {
    const next = lines.lines[i]!;
    if (next.blank) continue;
    if (next.indent < line.indent) break;
    if (next.indent === line.indent && next.pair && next.dashes === 0) count++;
  }
  return count;
}

/** A value written on the key's line, which leaves no room for a nested block. */
function hasInlineValue(value: string): boolean {
  return value !== "" && !/^[|>&!]/.test(value);
}

/** The nearest list item before `line` whose "-" is left of `line`'s: the list it may belong to. */
function previousListItem(lines: SourceLines, line: SourceLine): SourceLine | undefined {
  for (let i = line.index - 1; i >= 0; i--) {
    const candidate = lines.lines[i]!;
    if (!candidate.blank && candidate.dashes > 0 && candidate.indent < line.indent) return candidate;
  }
  return undefined;
}

/** The column of the "-" of the list the item on `line` was read into (from the parsed document). */
function listColumn(doc: Document.Parsed, lines: SourceLines, line: SourceLine): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Seq(_key, node) {
      if (!isSeq(node) || !node.range) return;
      const first = lines.lineAt(node.range[0]);
      if (first.index === line.index) return;
      for (const item of node.items) {
        const start = (item as { range?: [number, number, number] } | null)?.range?.[0];
        if (start !== undefined && lines.lineAt(start).index === line.index) {
          found = node.range[0] - first.start;
          return yamlModel().visit.BREAK;
        }
      }
      return undefined;
    },
  });
  return found;
}
