// The `yaml` package's syntax errors, said in the manifest writer's words, at the line of the
// mistake, with the likely fix. The package words them for YAML experts ("Nested mappings are not
// allowed in compact mappings"), often on the line above the mistake (an over-indented line is
// reported on the key before it), and one mistake makes a cascade of errors on the correct lines
// after it. Here each error is read against the text (indentation, the shape of the line) to name
// the mistake; the errors the mistake explains are dropped; what no rule recognises is worded by a
// table of the package's error codes.
import type { Document } from "yaml";
import { isScalar, visit } from "../../yaml-model.js";
import { KNOWN_FIELDS } from "../validate/schema.js";
import { type SourceLine, SourceLines } from "./source-lines.js";
import { tableMessage, type YamlIssue } from "./yaml-error-table.js";
import { col, type Diagnosis, indentation, nextLineIndentation } from "./yaml-indent-hints.js";

export type { YamlIssue } from "./yaml-error-table.js";

/** A mistake, said for the person who made it. */
export interface ExplainedIssue {
  /** Where the mistake is, as an offset into the text. */
  readonly offset: number;
  readonly message: string;
  /** An unknown tag (`!foo`) rather than broken syntax. */
  readonly unknownTag: boolean;
}

const ALL_FIELDS = new Set<string>(Object.values(KNOWN_FIELDS).flat());

/** `text` as a YAML value that reads back as exactly `text`: double quotes, or single when needed. */
export function quoted(text: string): string {
  if (!/["\\]/.test(text)) return `"${text}"`;
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * Every mistake the errors show, once each, in the order of the errors: an error on a line an
 * earlier mistake explains (the same line, or the lines its mistake made unreadable) is dropped.
 */
export function explainYamlIssues(
  doc: Document.Parsed,
  text: string,
  issues: readonly YamlIssue[],
): ExplainedIssue[] {
  const lines = new SourceLines(text);
  const explained: ExplainedIssue[] = [];
  const covered: (readonly [number, number])[] = [];
  const isCovered = (line: number) => covered.some(([from, to]) => line >= from && line <= to);
  let unrecognisedUpTo: number | undefined;
  for (const issue of [...issues].sort((a, b) => a.pos[0] - b.pos[0])) {
    // An error placed on a blank line (at its start) is about the line after it.
    const at = lines.lineAt(issue.pos[0]);
    const line = at.blank ? (lines.nextContent(at.index) ?? at) : at;
    if (isCovered(line.index)) continue;
    if (issue.code === "TAG_RESOLVE_FAILED") {
      const source = text.slice(issue.pos[0], issue.pos[1]);
      explained.push({
        offset: issue.pos[0],
        message: `unknown tag ${source}: a manifest uses plain YAML values only${tagHint(line, source)}`,
        unknownTag: true,
      });
      covered.push([line.index, line.index]);
      continue;
    }
    // An error no rule recognises, then errors on every line after it: one mistake that left the
    // rest unreadable (a first line that lost its "#", say), reported once.
    if (
      unrecognisedUpTo !== undefined &&
      (line.index === unrecognisedUpTo || lines.previousContent(line.index)?.index === unrecognisedUpTo)
    ) {
      unrecognisedUpTo = line.index;
      continue;
    }
    const recognised = diagnose(doc, lines, issue, line);
    const diagnosis = recognised ?? {
      offset: issue.pos[0],
      message: tableMessage(issue),
      covers: [line.index, line.index] as const,
    };
    unrecognisedUpTo = recognised ? undefined : line.index;
    explained.push({ offset: diagnosis.offset, message: diagnosis.message, unknownTag: false });
    covered.push([Math.min(diagnosis.covers[0], line.index), Math.max(diagnosis.covers[1], line.index)]);
  }
  return explained;
}

function tagHint(line: SourceLine, tag: string): string {
  const value = line.pair?.value;
  return line.pair?.key === "text" && value?.startsWith(tag)
    ? `; if "!" belongs to the text, put it in quotes: ${line.pair!.key}: ${quoted(value)}`
    : "";
}

/** What the mistake behind `issue` most likely is, when a rule recognises it. */
function diagnose(
  doc: Document.Parsed,
  lines: SourceLines,
  issue: YamlIssue,
  line: SourceLine,
): Diagnosis | undefined {
  const { code, message } = issue;
  const at = issue.pos[0];
  const only = [line.index, lines.blockEnd(line)] as const;

  if (code === "MISSING_CHAR" && /^Missing closing (["'])quote/.test(message)) {
    const quote = message.charAt("Missing closing ".length);
    const opening = openingQuoteBefore(doc, at) ?? at;
    return {
      offset: opening,
      message: `a text opened with ${quote} is never closed: add the closing ${quote}${quote === '"' ? ' (a " inside the text is written \\")' : " (a ' inside the text is written '')"}`,
      covers: [lines.lineAt(opening).index, line.index],
    };
  }

  if (line.tabAt !== undefined && (code === "TAB_AS_INDENT" || line.tabAt < line.indent)) {
    return {
      offset: line.start + line.tabAt,
      message:
        "this line is indented with a tab: YAML indents with spaces only; replace the tab with spaces (as many as the lines around it use)",
      covers: [line.index, lines.blockEnd(line)],
    };
  }

  const value = line.pair?.value;
  const write = (text: string): string => `${line.pair!.key}: ${quoted(text)}`;
  const valueOffset = line.pair ? line.start + line.pair.valueColumn : at;

  // A value YAML reads as syntax by its first characters.
  const inQuotes = (text: string, start: string): Diagnosis => ({
    offset: valueOffset,
    message: `a value cannot start with "${start}" unless it is in quotes: write ${write(text)}`,
    covers: only,
  });
  if (code === "BAD_SCALAR_START" && value) return inQuotes(value, value.charAt(0));
  if (
    code === "UNEXPECTED_TOKEN" &&
    /^Unexpected block-seq-ind on same line with key/.test(message) &&
    value
  ) {
    return inQuotes(value, "- ");
  }
  if (
    code === "UNEXPECTED_TOKEN" &&
    (/^Not a YAML token/.test(message) || /^Block scalar header includes extra characters/.test(message)) &&
    value &&
    /^[|>]/.test(value)
  ) {
    return {
      offset: at,
      message: `nothing may follow "${value.charAt(0)}" on its line: the text starts on the next line, indented more than "${line.pair!.key}:" (or, to send "${value}" as it is, write ${write(value)})`,
      covers: [line.index, lines.blockEnd(line)],
    };
  }
  if (code === "UNEXPECTED_TOKEN" && /^Unexpected \S+ at node end/.test(message) && value) {
    const after = textAfterValue(line, value);
    if (after) return { offset: valueOffset, message: after, covers: only };
  }

  const flow =
    /^Flow (?:map|sequence) in block collection must be sufficiently indented and end with a ([}\]])/.exec(
      message,
    );
  if (flow) return unclosedFlow(lines, line, flow[1] === "}" ? "{" : "[", flow[1]!);

  return (
    lineShape(lines, line) ??
    blockScalarIndent(lines, line) ??
    colonInValue(lines, code, line, at) ??
    indentation(doc, lines, line, code, message) ??
    nextLineIndentation(lines, line, code)
  );
}

/** `text: "Hello" she said`, `text: 'It's'`, `text: [draft] smiles`: text after a value that ended. */
function textAfterValue(line: SourceLine, value: string): string | undefined {
  const key = line.pair!.key;
  const first = value.charAt(0);
  if (first === "'") {
    const inner = value.endsWith("'") && value.length > 1 ? value.slice(1, -1) : value.slice(1);
    return `the text ends at its second ': a ' inside a '...' text is written twice; write ${key}: '${inner.replaceAll("'", "''")}'${inner.includes('"') ? "" : ` (or ${key}: "${inner}")`}`;
  }
  if (first === '"') {
    return `the text ends at its second ": to send the quotes as part of the text, write ${key}: '${value.replaceAll("'", "''")}'`;
  }
  if (first === "[" || first === "{") {
    return `a value starting with ${first} is read as a ${first === "[" ? "list" : "mapping"}: to send it as text, write ${key}: ${quoted(value)}`;
  }
  if (first === "*" || first === "&") {
    return `a value starting with ${first} is read as an ${first === "*" ? "alias" : "anchor"}: to send it as text, write ${key}: ${quoted(value)}`;
  }
  return undefined;
}

/** The `{` (or `[`) left open before `line`, and why: forgotten, or closed only inside a comment. */
function unclosedFlow(
  lines: SourceLines,
  line: SourceLine,
  open: string,
  close: string,
): Diagnosis | undefined {
  for (let i = line.index - 1; i >= 0 && i >= line.index - 50; i--) {
    const candidate = lines.lines[i]!;
    const opener = unmatchedOpener(candidate.text, open, close);
    if (opener === undefined) continue;
    const offset = candidate.start + opener.column;
    const covers = [i, line.index] as const;
    if (opener.commentAt !== undefined) {
      const commented = candidate.text.slice(opener.commentAt);
      const closeAt = commented.lastIndexOf(close);
      const before = /([A-Za-z_][\w-]*):[ \t]+([^,{}[\]]*)$/.exec(candidate.text.slice(0, opener.commentAt));
      const fix =
        before && closeAt > 0
          ? `: write ${before[1]}: ${quoted(`${before[2]}${commented.slice(0, closeAt)}`.trim())}`
          : "";
      return {
        offset: candidate.start + opener.commentAt,
        message: `" #" starts a YAML comment, so the rest of the line (${JSON.stringify(commented.trimEnd())}) is not read and the ${open} before it is never closed; a text holding " #" must be in quotes${fix}`,
        covers,
      };
    }
    return {
      offset,
      message: `this ${open} is never closed: add the closing ${close} (on this line, or on a later line indented more than the key)`,
      covers,
    };
  }
  return undefined;
}

/** The first `open` of `text` left unmatched (quotes skipped), and where a comment starts after it. */
function unmatchedOpener(
  text: string,
  open: string,
  close: string,
): { column: number; commentAt: number | undefined } | undefined {
  const stack: number[] = [];
  let commentAt: number | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      // Quotes only start a text after a separator; a word's apostrophe ("it's") does not.
      if (i > 0 && !/[\s,[{:]/.test(text[i - 1]!)) continue;
      const end = c === '"' ? /"(?:[^"\\]|\\.)*"/y : /'(?:[^']|'')*'/y;
      end.lastIndex = i;
      const match = end.exec(text);
      if (match) i += match[0].length - 1;
      continue;
    }
    if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) {
      commentAt = i;
      break;
    }
    if (c === open) stack.push(i);
    else if (c === close) stack.pop();
  }
  return stack.length > 0 ? { column: stack[0]!, commentAt } : undefined;
}

/** A line whose own shape is wrong: `-id: x`, `model:actor-2`, `model actor-2`. */
function lineShape(lines: SourceLines, line: SourceLine): Diagnosis | undefined {
  const only = [line.index, line.index] as const;
  const rest = line.text.slice(line.keyColumn);
  const glued = /^-([^\s-].*)$/.exec(rest);
  if (glued) {
    return {
      offset: line.start + line.keyColumn,
      message: `a list item starts with "- " (a dash, then a space): write - ${glued[1]}`,
      covers: [line.index, lines.blockEnd(line)],
    };
  }
  if (line.pair) return undefined;
  const noSpace = /^([A-Za-z_][\w-]*):([^\s/:].*)$/.exec(rest);
  if (noSpace && ALL_FIELDS.has(noSpace[1]!)) {
    return {
      offset: line.start + line.keyColumn + noSpace[1]!.length + 1,
      message: `a field's colon must be followed by a space: write ${noSpace[1]}: ${noSpace[2]}`,
      covers: only,
    };
  }
  const noColon = /^([A-Za-z_][\w-]*)[ \t]+(\S.*)$/.exec(rest);
  if (noColon && ALL_FIELDS.has(noColon[1]!)) {
    return {
      offset: line.start + line.keyColumn,
      message: `the colon after "${noColon[1]}" is missing: write ${noColon[1]}: ${noColon[2]}`,
      covers: only,
    };
  }
  return undefined;
}

/** The text of a `|` or `>` block not indented more than its key. */
function blockScalarIndent(lines: SourceLines, line: SourceLine): Diagnosis | undefined {
  const previous = lines.previousContent(line.index);
  const header = previous?.pair && /^([|>])[1-9+-]*$/.exec(previous.pair.value);
  if (!previous || !header || line.indent > previous.keyColumn) return undefined;
  let end = line.index;
  while (end + 1 < lines.lines.length) {
    const next = lines.lines[end + 1]!;
    if (!next.blank && (next.indent < line.indent || next.dashes > 0)) break;
    end++;
  }
  return {
    offset: line.start + line.indent,
    message: `the text of a "${header[1]}" block must be indented more than its key "${previous.pair!.key}:" (${col(previous.keyColumn)}): indent its lines`,
    covers: [line.index, end],
  };
}

/** `text: Note: prices end soon`: a second ": " reads as a mapping inside the value. */
function colonInValue(lines: SourceLines, code: string, line: SourceLine, at: number): Diagnosis | undefined {
  if (code !== "BLOCK_AS_IMPLICIT_KEY" || !line.pair) return undefined;
  const value = line.pair.value;
  if (!/: /.test(value) || /^["'[{|>]/.test(value)) return undefined;
  const covers = [line.index, lines.blockEnd(line)] as const;
  const field = /^([A-Za-z_][\w-]*): /.exec(value)?.[1];
  const next = lines.nextContent(line.index);
  if (field && ALL_FIELDS.has(field) && next && next.indent > line.keyColumn) {
    // `defaults:  model: avatar-h1` with the other fields of defaults below: a lost line break.
    return {
      offset: line.start + line.pair.valueColumn,
      message: `"${field}:" is on the line of "${line.pair.key}:": a field goes on a line of its own; start "${field}:" on the next line, in the column of the fields below it (${col(next.indent)})`,
      covers,
    };
  }
  return {
    offset: at,
    message: `a value containing ": " must be in quotes: write ${line.pair.key}: ${quoted(value)}`,
    covers,
  };
}

/** The start of the quoted text that runs up to `offset` (the unclosed one). */
function openingQuoteBefore(doc: Document.Parsed, offset: number): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Scalar(_key, node) {
      if (!isScalar(node) || !node.range) return;
      if (node.type !== "QUOTE_DOUBLE" && node.type !== "QUOTE_SINGLE") return;
      const [start, end] = node.range;
      if (start < offset && end >= offset && (found === undefined || start > found)) found = start;
    },
  });
  return found;
}
