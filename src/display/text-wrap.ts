// Lines of human text broken at word boundaries to fit a terminal's width, rather than cut by the
// terminal in the middle of a word (`--retry-f` / `ailed`). Colour codes take no column and stay
// with the word they colour. A continuation line is indented under what it continues: under the
// second column of a two-column line (an option and its description, a label and its value), two
// more than a list item's indent, under a deeper line itself, and flush with an unindented one.

/** An escape sequence (colour, cursor): it takes no column. Split by it, the parts at odd places. */
// eslint-disable-next-line no-control-regex -- the escape character is what is matched
const ESCAPE = /(\x1b\[[0-9;?]*[A-Za-z])/;

/** `text` without its escape sequences: what a terminal shows of it. */
export function plainText(text: string): string {
  return text
    .split(ESCAPE)
    .filter((_, i) => i % 2 === 0)
    .join("");
}

/** The columns `text` takes on a terminal (its escape sequences take none). */
export function visibleWidth(text: string): number {
  return [...plainText(text)].length;
}

/** A run of spaces or of other characters, with the escape sequences inside or before it. */
interface Run {
  readonly text: string;
  readonly width: number;
  readonly space: boolean;
}

function runsOf(line: string): Run[] {
  const runs: Run[] = [];
  let text = "";
  let width = 0;
  let space: boolean | undefined;
  for (const [i, part] of line.split(ESCAPE).entries()) {
    if (i % 2 === 1) {
      text += part;
      continue;
    }
    for (const ch of part) {
      const isSpace = ch === " ";
      if (space !== undefined && isSpace !== space && width > 0) {
        runs.push({ text, width, space });
        text = "";
        width = 0;
      }
      space = isSpace;
      text += ch;
      width++;
    }
  }
  if (text !== "") runs.push({ text, width, space: space ?? false });
  return runs;
}

/** The deepest indent of a list's items. */
const LIST_INDENT = 4;

/** Where a continuation of `line` starts (see the top of this file). */
export function hangingIndent(line: string, width: number): number {
  const plain = plainText(line);
  const lead = plain.length - plain.trimStart().length;
  const column = /^\s*\S(?:.*?\S)? {2,}(?=\S)/.exec(plain)?.[0].length;
  // An item of a list (a job under a heading) goes on two further in; a deeper line is a column's
  // text already (a description going on), which goes on under itself.
  const own = lead === 0 ? 0 : lead <= LIST_INDENT ? lead + 2 : lead;
  const indent = column !== undefined && column <= width / 2 ? column : own;
  // On a narrow terminal, room for words first.
  return indent <= width / 2 ? indent : 0;
}

export interface WrapOptions {
  /** Columns already taken on the first line (text written before it on the same line). @defaultValue 0 */
  readonly start?: number;
  /** The continuation lines' indent. @defaultValue hangingIndent(line) */
  readonly indent?: number;
}

/**
 * `line` (no line break in it) in lines of at most `width` columns, broken where it has spaces (the
 * spaces at a break dropped); a word longer than a line is cut, the only place one is.
 */
export function wrapLine(line: string, width: number, o: WrapOptions = {}): string[] {
  const start = o.start ?? 0;
  if (width < 1 || start + visibleWidth(line) <= width) return [line];
  const indent = o.indent ?? hangingIndent(line, width);
  const lines: string[] = [];
  let current = "";
  let column = start;
  /** Whether a word is on the current line (else a break would leave it empty). */
  let placed = false;
  /** The spaces before the next word, held until the word is placed (dropped at a break). */
  let spaces: Run | undefined;
  const breakLine = (): void => {
    lines.push(current);
    current = " ".repeat(indent);
    column = indent;
    placed = false;
    spaces = undefined;
  };
  for (const run of runsOf(line)) {
    if (run.space) {
      if (placed || lines.length > 0) spaces = run;
      else {
        // The line's own indent.
        current += run.text;
        column += run.width;
      }
      continue;
    }
    if (placed && column + (spaces?.width ?? 0) + run.width > width) breakLine();
    if (spaces) {
      current += spaces.text;
      column += spaces.width;
      spaces = undefined;
    }
    // A word longer than the room on a line of its own: cut where the line ends.
    let word = run.text;
    while (column + visibleWidth(word) > width && visibleWidth(word) > 1) {
      const [head, rest] = splitAt(word, Math.max(1, width - column));
      current += head;
      breakLine();
      word = rest;
    }
    current += word;
    column += visibleWidth(word);
    placed = true;
  }
  // Trailing spaces (a padded column) only as far as they fit.
  if (spaces && column + spaces.width <= width) current += spaces.text;
  lines.push(current);
  return lines;
}

/** `text` split after `columns` visible characters, its escape sequences kept. */
function splitAt(text: string, columns: number): [string, string] {
  let head = "";
  let taken = 0;
  const parts = text.split(ESCAPE);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (i % 2 === 1) {
      head += part;
      continue;
    }
    const chars = [...part];
    if (taken + chars.length <= columns) {
      head += part;
      taken += chars.length;
      continue;
    }
    const cut = columns - taken;
    head += chars.slice(0, cut).join("");
    return [head, chars.slice(cut).join("") + parts.slice(i + 1).join("")];
  }
  return [head, ""];
}

export interface WrapTextOptions {
  /** Columns already taken on its first line. @defaultValue 0 */
  readonly start?: number;
  /** Lines left whole, whatever their width. @defaultValue none */
  readonly keep?: (line: string) => boolean;
  /**
   * The text is paragraphs (a command's help): an unindented line after a broken one goes on from
   * it too. Elsewhere an unindented line is a message of its own. @defaultValue false
   */
  readonly paragraphs?: boolean;
}

/**
 * Each line of `text` wrapped to `width` (see wrapLine). A line indented as the continuation of one
 * that had to be broken (an option's description going on under it) takes up where that one's last
 * piece ends: a paragraph laid out for a wider terminal flows again rather than breaking twice.
 */
export function wrapText(text: string, width: number, o: WrapTextOptions = {}): string {
  const out: string[] = [];
  /** The last piece of the line before, broken: the next line may go on from it. */
  let carried: { readonly piece: string; readonly indent: number } | undefined;
  text.split("\n").forEach((given, i) => {
    let line = given;
    let indent: number | undefined;
    const lead = line.length - line.trimStart().length;
    const goesOn = lead > 0 || o.paragraphs === true;
    if (carried && lead === carried.indent && goesOn && line.trim() !== "" && !o.keep?.(line)) {
      line = `${carried.piece.trimEnd()} ${line.trimStart()}`;
      indent = carried.indent;
    } else if (carried) out.push(carried.piece);
    carried = undefined;
    if (o.keep?.(line)) {
      out.push(line);
      return;
    }
    const start = i === 0 ? (o.start ?? 0) : 0;
    indent ??= hangingIndent(line, width);
    const pieces = wrapLine(line, width, { start, indent });
    if (pieces.length === 1) {
      out.push(pieces[0]!);
      return;
    }
    out.push(...pieces.slice(0, -1));
    carried = { piece: pieces.at(-1)!, indent };
  });
  if (carried) out.push(carried.piece);
  return out.join("\n");
}
