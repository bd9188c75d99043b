// A manifest's text as lines, for the checks that read it as a person does: indentation, where a
// key ends and its value starts, comments. Offsets are into the text; lines and columns 0-based.

export interface SourceLine {
  /** 0-based. */
  readonly index: number;
  /** Offset of the line's first character in the text. */
  readonly start: number;
  /** The line without its line break (nor a CR before it). */
  readonly text: string;
  /** Leading spaces and tabs. */
  readonly indent: number;
  /** Whether the leading white space holds a tab, and where (column, 0-based). */
  readonly tabAt: number | undefined;
  /** Empty, white space only, or a comment only. */
  readonly blank: boolean;
  /** Where the first key of the line starts: after the indentation and any "- " list markers. */
  readonly keyColumn: number;
  /** How many "- " list markers the line starts with. */
  readonly dashes: number;
  /** `key: value` read from keyColumn on, when the line has that form. */
  readonly pair: LinePair | undefined;
}

export interface LinePair {
  readonly key: string;
  /** Column (0-based) of the value's first character; the end of the line when there is none. */
  readonly valueColumn: number;
  /** The value as written, without a trailing comment (for plain values) or trailing spaces. */
  readonly value: string;
}

const KEY = /^([A-Za-z_$][\w.$-]*|"[^"\n]*"|'[^'\n]*')[ \t]*:(?=[ \t]|$)[ \t]*/;

function readPair(text: string, from: number): LinePair | undefined {
  const match = KEY.exec(text.slice(from));
  if (!match) return undefined;
  const valueColumn = from + match[0].length;
  let value = text.slice(valueColumn);
  // A comment ends a plain value ("text: hi # note"); quoted values keep their '#'.
  if (!/^["']/.test(value)) value = value.replace(/(^|[ \t])#.*$/, "");
  return { key: match[1]!.replace(/^["']|["']$/g, ""), valueColumn, value: value.trimEnd() };
}

function readLine(index: number, start: number, text: string): SourceLine {
  const lead = /^[ \t]*/.exec(text)![0];
  const tab = lead.indexOf("\t");
  const markers = /^(?:-(?:[ \t]+|$))*/.exec(text.slice(lead.length))![0];
  const keyColumn = lead.length + markers.length;
  const rest = text.slice(lead.length);
  return {
    index,
    start,
    text,
    indent: lead.length,
    tabAt: tab === -1 ? undefined : tab,
    blank: rest === "" || rest.startsWith("#"),
    keyColumn,
    dashes: (markers.match(/-/g) ?? []).length,
    pair: readPair(text, keyColumn),
  };
}

export class SourceLines {
  readonly lines: readonly SourceLine[];

  constructor(text: string) {
    const lines: SourceLine[] = [];
    let start = 0;
    for (const raw of text.split("\n")) {
      lines.push(readLine(lines.length, start, raw.replace(/\r$/, "")));
      start += raw.length + 1;
    }
    this.lines = lines;
  }

  /** The line that holds `offset` (the last line for an offset at the very end). */
  lineAt(offset: number): SourceLine {
    let low = 0;
    let high = this.lines.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.lines[mid]!.start <= offset) low = mid;
      else high = mid - 1;
    }
    return this.lines[low]!;
  }

  /** The nearest line before `index` that is not blank or a comment. */
  previousContent(index: number): SourceLine | undefined {
    for (let i = index - 1; i >= 0; i--) if (!this.lines[i]!.blank) return this.lines[i];
    return undefined;
  }

  /** The nearest line after `index` that is not blank or a comment. */
  nextContent(index: number): SourceLine | undefined {
    for (let i = index + 1; i < this.lines.length; i++) if (!this.lines[i]!.blank) return this.lines[i];
    return undefined;
  }

  /**
   * The last line of the block that `line` opens: the lines after it indented more than it
   * (blank lines inside the block included), or `line` itself.
   */
  blockEnd(line: SourceLine): number {
    let end = line.index;
    for (let i = line.index + 1; i < this.lines.length; i++) {
      const next = this.lines[i]!;
      if (next.blank) continue;
      if (next.indent <= line.indent) break;
      end = i;
    }
    return end;
  }
}
