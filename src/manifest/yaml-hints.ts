// The `yaml` package's syntax errors, said in the manifest writer's words, at the line of the
// mistake, with the likely fix. The package words them for YAML experts ("Nested mappings are not
// allowed in compact mappings"), often on the line above the mistake (an over-indented line is
// reported on the key before it), and one mistake makes a cascade of errors on the correct lines
// after it. Here each error is read against the text (indentation, the shape of the line) to name
// the mistake; the errors the mistake explains are dropped; what no rule recognises is worded by a
// table of the package's error codes.
import { type Document, isScalar, isSeq, visit } from "yaml";
import { KNOWN_FIELDS } from "./schema.js";
import { type SourceLine, SourceLines } from "./source-lines.js";

/** One error or warning of the `yaml` package. */
export interface YamlIssue {
  readonly code: string;
  readonly message: string;
  readonly pos: readonly [number, number];
}

/** A mistake, said for the person who made it. */
export interface ExplainedIssue {
  /** Where the mistake is, as an offset into the text. */
  readonly offset: number;
  readonly message: string;
  /** An unknown tag (`!foo`) rather than broken syntax. */
  readonly unknownTag: boolean;
}

interface Diagnosis {
  readonly offset: number;
  readonly message: string;
  /** The lines (0-based, inclusive) whose errors follow from this mistake: not reported again. */
  readonly covers: readonly [number, number];
}

const ALL_FIELDS = new Set<string>(Object.values(KNOWN_FIELDS).flat());
/** Fields whose value is a list: `chunks: 5` with a list under it is a value and a list at once. */
const LIST_FIELDS = new Set(["videos", "chunks"]);

/** `text` as a YAML value that reads back as exactly `text`: double quotes, or single when needed. */
export function quoted(text: string): string {
  if (!/["\\]/.test(text)) return `"${text}"`;
  return `'${text.replaceAll("'", "''")}'`;
}

const col = (column: number): string => `column ${column + 1}`;

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

  if (code === "BAD_SCALAR_START" && value) {
    return {
      offset: valueOffset,
      message: `a value cannot start with "${value.charAt(0)}" unless it is in quotes: write ${write(value)}`,
      covers: only,
    };
  }
  if (
    code === "UNEXPECTED_TOKEN" &&
    /^Unexpected block-seq-ind on same line with key/.test(message) &&
    value
  ) {
    return {
      offset: valueOffset,
      message: `a value cannot start with "- " unless it is in quotes: write ${write(value)}`,
      covers: only,
    };
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
function indentation(
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
function nextLineIndentation(lines: SourceLines, line: SourceLine, code: string): Diagnosis | undefined {
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
          return visit.BREAK;
        }
      }
      return undefined;
    },
  });
  return found;
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

/**
 * The `yaml` package's error codes in plain words, for the errors no rule above recognised. Codes
 * with several causes are told apart by the package's message.
 */
const CODE_MESSAGES: Readonly<Record<string, string | readonly (readonly [RegExp, string])[]>> = {
  ALIAS_PROPS: "an alias (*name) cannot have an anchor or a tag of its own",
  BAD_ALIAS:
    "an anchor (&name) or alias (*name) needs a name; if & or * belongs to a text, put the text in quotes",
  BAD_DIRECTIVE:
    "a line starting with % is read as a YAML directive and this one is not valid; if % belongs to a value, put the value in quotes",
  BAD_DQ_ESCAPE:
    'an unknown \\ escape inside "...": write \\\\ for a backslash, or use single quotes, where \\ has no special meaning',
  BAD_INDENT: [
    [
      /^All sequence items/,
      'this list item\'s "-" is not in the same column as the items before it: line them up',
    ],
    [/^Flow (map|sequence)/, "a { or [ opened above is never closed: add the closing } or ]"],
    [
      /./,
      "this line's indentation does not fit the lines around it: line it up with the fields of its block",
    ],
  ],
  BAD_PROP_ORDER: "an anchor (&name) or tag (!tag) must come after the - or ? that starts the item",
  BAD_SCALAR_START: "this value starts with a character YAML reserves (@, `, %): put the value in quotes",
  BLOCK_AS_IMPLICIT_KEY:
    'this value is read as the start of a mapping: a value containing ": " must be in quotes, and a line under a field that has a value must not be indented more than the field',
  BLOCK_IN_FLOW:
    "inside { } or [ ], items are written on one line, separated by commas: no indented blocks or lists",
  DUPLICATE_KEY: "this key is already used in its mapping",
  KEY_OVER_1024_CHARS:
    "this line reads as a key longer than 1024 characters: a long text must follow its key's colon on the same line, or be in quotes",
  MISSING_CHAR: [
    [
      /^Sequence item without - indicator/,
      "this line is indented differently from the lines around it: give it the same indentation as the other fields of its block",
    ],
    [
      /^Implicit map keys need to be followed by map values/,
      'this line has no ": " after its field name: write name: value',
    ],
    [/^Missing , between flow/, "a comma is missing between two items inside { } or [ ]"],
    [/^Missing , or : between flow/, 'a comma or ": " is missing inside { } or [ ]'],
    [
      /^Missing space after : in flow/,
      'a ":" inside { } must be followed by a space: write {voice: 17}, not {voice:17}',
    ],
    [
      /^Comments must be separated/,
      'a comment starts with " #" (a space before the #); a # inside a value needs the value in quotes',
    ],
    [/^Tags and anchors must be separated/, "an anchor (&name) or tag (!tag) must be followed by a space"],
    [/./, "something is missing here (a quote, a bracket, a colon or a dash)"],
  ],
  MULTILINE_IMPLICIT_KEY:
    "this line and the next read as one key: a field is written name: value on one line (a colon and a space after the name)",
  MULTIPLE_ANCHORS: "a value can have only one anchor (&name)",
  MULTIPLE_DOCS: "a manifest file holds one YAML document; this one has several ('---')",
  MULTIPLE_TAGS: "a value can have only one tag (!tag)",
  NON_STRING_KEY: "a key must be a plain name, not a list or a mapping",
  TAB_AS_INDENT:
    "this line is indented with a tab: YAML indents with spaces only; replace the tab with spaces",
  UNEXPECTED_TOKEN: [
    [
      /^Unexpected \S+ at node end/,
      "something follows a value that has ended (a closing quote or bracket): put the whole value in quotes",
    ],
    [/^Unexpected , in flow/, "an extra comma inside { } or [ ]"],
    [/^Unexpected block-seq-ind/, 'a value cannot start with "- " unless it is in quotes'],
    [/./, "a character YAML does not expect here: if it belongs to a value, put the value in quotes"],
  ],
};

function tableMessage(issue: YamlIssue): string {
  const entry = CODE_MESSAGES[issue.code];
  const parser = issue.message.replace(/\s+/g, " ").trim();
  if (typeof entry === "string") return entry;
  const matched = entry?.find(([pattern]) => pattern.test(parser));
  return matched ? matched[1] : `YAML syntax: ${parser}`;
}
