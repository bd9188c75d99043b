// Texts sent to the service (a chunk's `text`, a speech's `text`) that YAML reads differently from
// how they look: valid YAML, so nothing else would say a word, yet the paid prompt is not the one
// written. `text: Shot #1 of the shop` is sent as "Shot" (" #" starts a comment); `text: &team
// smiles` as "smiles" (an anchor); a field that lost its colon under a text is read as more of it.
//
// Errors where the text is cut and no one writes it so on purpose; warnings where the YAML may be
// meant (a comment after a text, a text over several lines): printed, the run goes on.
import type { Document, Node, Scalar } from "yaml";
import { isAlias, isMap, isScalar, isSeq, visit } from "../../yaml-model.js";
import { show } from "./messages.js";
import { type ParsedYaml, positionOf } from "../parse/parse-yaml.js";
import { type Problem, PROBLEM_CODES, type Warning, WARNING_CODES, type WarningCode } from "../problem.js";
import { KNOWN_FIELDS } from "./schema.js";
import { quoted } from "../parse/yaml-hints.js";

/** What checkTexts finds, placed but without the file (the loader adds it). */
export interface TextFindings {
  readonly errors: Omit<Problem, "file">[];
  readonly warnings: Omit<Warning, "file">[];
}

interface Add {
  error(offset: number, message: string): void;
  warning(offset: number, code: WarningCode, message: string): void;
}

const ALL_FIELDS = new Set<string>(Object.values(KNOWN_FIELDS).flat());

/** A `text:` line whose value YAML may read otherwise: a cheap scan, so most files skip the rest. */
const TEXT_LINE = /^[ \t]*(?:-[ \t]+)*(?:["']?text["']?)[ \t]*:[ \t]*(.*)$/gm;

function worthChecking(text: string): boolean {
  if (!text.includes("text")) return false;
  TEXT_LINE.lastIndex = 0;
  for (let m = TEXT_LINE.exec(text); m; m = TEXT_LINE.exec(text)) {
    const value = m[1]!;
    if (/^[&|>]/.test(value)) return true;
    if (/^["'{[]/.test(value)) continue;
    if (/(^|[ \t])#/.test(value)) return true;
    // A plain text that may go on over the next line: its next line is indented more than `text:`.
    const next = text.slice(m.index + m[0].length + 1, text.indexOf("\n", m.index + m[0].length + 1) >>> 0);
    const keyColumn = m[0].length - m[0].trimStart().replace(/^(?:-[ \t]+)*/, "").length;
    const indent = /^[ \t]*/.exec(next)![0].length;
    if (value !== "" && indent > keyColumn && next.trim() !== "" && !next.trimStart().startsWith("#")) {
      return true;
    }
  }
  return false;
}

/** The text nodes of a manifest: each chunk's `text` and each speech's `text`, with their field path. */
function textNodes(doc: Document.Parsed): { node: Node | null; key: string }[] {
  const found: { node: Node | null; key: string }[] = [];
  const videos = isMap(doc.contents) ? doc.contents.get("videos", true) : undefined;
  if (!isSeq(videos)) return found;
  for (const video of videos.items) {
    const chunks = isMap(video) ? video.get("chunks", true) : undefined;
    if (!isSeq(chunks)) continue;
    for (const chunk of chunks.items) {
      if (!isMap(chunk)) continue;
      if (chunk.has("text")) found.push({ node: chunk.get("text", true) as Node | null, key: "text" });
      const speech = chunk.get("speech", true);
      if (isMap(speech) && speech.has("text")) {
        found.push({ node: speech.get("text", true) as Node | null, key: "text" });
      }
    }
  }
  return found;
}

/** Every text of the manifest that YAML reads otherwise than it looks, said with the fix. */
export function checkTexts(parsed: ParsedYaml, text: string): TextFindings {
  const findings: TextFindings = { errors: [], warnings: [] };
  if (!worthChecking(text)) return findings;
  const { doc, lineCounter } = parsed.document();
  const add: Add = {
    error: (offset, message) =>
      findings.errors.push({ ...positionOf(lineCounter, offset), message, code: PROBLEM_CODES.textCut }),
    warning: (offset, code, message) =>
      findings.warnings.push({ ...positionOf(lineCounter, offset), message, code }),
  };
  const aliased = new Set<string>();
  visit(doc, {
    Alias(_key, node) {
      if (isAlias(node)) aliased.add(node.source);
    },
  });
  for (const { node } of textNodes(doc)) {
    if (!isScalar(node) || !node.range) continue;
    if (node.type === "PLAIN") checkPlain(node, text, aliased, add);
    else if (node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED") checkBlock(node, text, add);
  }
  return findings;
}

function lineEndAt(text: string, offset: number): number {
  const end = text.indexOf("\n", offset);
  return end === -1 ? text.length : end;
}

function checkPlain(node: Scalar, text: string, aliased: ReadonlySet<string>, add: Add): void {
  const [start, valueEnd] = node.range!;
  const value = typeof node.value === "string" ? node.value : String(node.value);
  const written = text.slice(start, valueEnd);

  // `text: &team smiles`: the anchor's name is taken out of the text. On purpose only when an alias
  // uses it (`text: *team` elsewhere).
  if (node.anchor !== undefined && !aliased.has(node.anchor)) {
    const anchorAt = text.lastIndexOf(`&${node.anchor}`, start);
    if (anchorAt !== -1) {
      const whole = `&${node.anchor} ${written.replace(/\s*\n\s*/g, " ")}`;
      add.error(
        anchorAt,
        `"&${node.anchor}" is read as a YAML anchor, not as text: the text would be sent as ${show(value)}; if & belongs to the text, put it in quotes: text: ${quoted(whole)}`,
      );
    }
  }

  // Lines after the first: YAML joins them with spaces. A line that looks like a field lost its colon
  // (a list item there is a syntax error already).
  if (written.includes("\n")) {
    const firstLineEnd = lineEndAt(text, start);
    let at = firstLineEnd + 1;
    while (at < valueEnd) {
      const end = Math.min(lineEndAt(text, at), valueEnd);
      const line = text.slice(at, end).trim();
      const field = /^([A-Za-z_][\w-]*)(?:[ \t]+(.*))?$/.exec(line);
      if (field && ALL_FIELDS.has(field[1]!)) {
        const lineNo = text.slice(0, at).split("\n").length;
        const fix = `if it is a field, write ${field[1]}: ${field[2] ?? "..."} in the column of the fields above`;
        add.warning(
          at + (text.slice(at, end).length - text.slice(at, end).trimStart().length),
          WARNING_CODES.textJoined,
          `line ${lineNo} (${JSON.stringify(line)}) is read as more of the text above, sent as ${show(value)}: ${fix}; if it is text, put the whole text in quotes`,
        );
        break;
      }
      at = end + 1;
    }
  }

  // A comment after the text, on its last line: " #" ends the text. `#1`, `#spring` read as text
  // cut short (an error); "# note" as a comment the writer meant (a warning).
  const rest = text.slice(valueEnd, lineEndAt(text, valueEnd));
  const comment = /^[ \t]+(#.*)$/.exec(rest);
  if (comment) {
    const commentText = comment[1]!.trimEnd();
    const commentAt = valueEnd + rest.indexOf("#");
    const whole = `${written.replace(/\s*\n\s*/g, " ")} ${commentText}`;
    const fix = `if it belongs to the text, put the whole text in quotes: text: ${quoted(whole)}`;
    if (/^#\S/.test(commentText)) {
      add.error(
        commentAt,
        `this text would be sent as ${show(value)}: " #" starts a YAML comment, so ${JSON.stringify(commentText)} is left out; ${fix} (a comment goes on a line of its own)`,
      );
    } else {
      add.warning(
        commentAt,
        WARNING_CODES.textComment,
        `this text is sent as ${show(value)}: " #" starts a YAML comment, so ${JSON.stringify(commentText)} is left out; ${fix}, or move the comment to a line of its own`,
      );
    }
  }
}

function checkBlock(node: Scalar, text: string, add: Add): void {
  const [start, valueEnd] = node.range!;
  const headerEnd = lineEndAt(text, start);
  const header = text
    .slice(start, headerEnd)
    .replace(/[ \t]+#.*$/, "")
    .trim();
  const indicator = header.charAt(0);
  const value = typeof node.value === "string" ? node.value : "";

  // `# ...` lines inside the block are text, not comments.
  for (let at = headerEnd + 1; at < valueEnd; at = lineEndAt(text, at) + 1) {
    const line = text.slice(at, lineEndAt(text, at));
    const content = line.trimStart();
    if (content.startsWith("#")) {
      add.warning(
        at + line.length - content.length,
        WARNING_CODES.textCommentLine,
        `this line is inside the "${indicator}" block of text above, so ${JSON.stringify(content.trimEnd())} is sent as part of the text: a # line in a block is not a comment; if it is one, move it above the text's key`,
      );
      break;
    }
  }

  // `|+` keeps every blank line at its end, all sent.
  const breaks = /\n*$/.exec(value)![0].length;
  if (header.includes("+") && breaks > 1) {
    add.warning(
      start,
      WARNING_CODES.textBlankLines,
      `this text ends with ${breaks} line breaks, all sent as part of it (the "+" of "${header}" keeps the blank lines after the text); write "${indicator}" to keep one, "${indicator}-" to keep none`,
    );
  }
}

/** Fields whose value is text: a number, yes/no or nothing there is a quoting matter. */
const TEXT_FIELDS = new Set(["text", "id", "name"]);

/**
 * For a text field YAML read as something else (`text: 1.50` is the number 1.5, `id: 001` the
 * number 1, `text: #1 shot` nothing), the message that says so with the fix, written from the text
 * as it is in the file; undefined for other problems.
 */
export function notTextMessage(
  parsed: ParsedYaml,
  text: string,
  path: readonly (string | number)[],
  value: unknown,
): string | undefined {
  const field = path[path.length - 1];
  if (typeof field !== "string" || !TEXT_FIELDS.has(field)) return undefined;
  if (typeof value !== "number" && typeof value !== "boolean" && value !== null) return undefined;
  const node = parsed.document().doc.getIn(path, true);
  if (!isScalar(node) || node.type !== "PLAIN" || !node.range) return undefined;
  const [start, valueEnd] = node.range;
  if (value === null) {
    const comment = /^[ \t]*(#.*)$/.exec(text.slice(start, lineEndAt(text, start)));
    if (!comment) return undefined;
    const commentText = comment[1]!.trimEnd();
    return `${field} is empty: " #" starts a YAML comment, so ${JSON.stringify(commentText)} is not read; if it is the text, put it in quotes: ${field}: ${quoted(commentText)}`;
  }
  const written = text.slice(start, valueEnd);
  const as = typeof value === "boolean" ? `the yes/no value ${written}` : `the number ${String(value)}`;
  return `${field} is read as ${as}, not as text: write ${field}: ${quoted(written)}`;
}
