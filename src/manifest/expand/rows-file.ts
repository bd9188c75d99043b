// The CSV file of a video's `rows:` (rows.ts), read under the rule media are read under (inside the
// folder reel was started in or an --allow-read folder, also after following links) and parsed by
// csv-parse. Every cell keeps the place where it starts (physical line and character column,
// 1-based, a quoted line break counted), so that a problem of a cell is said there.
import { isUtf8 } from "node:buffer";
import { realpath } from "node:fs/promises";
import path from "node:path";
import { isInside } from "../../user-path.js";
import { isLinkRefusal, openNoFollow } from "../validate/media-file.js";
import { PROBLEM_CODES, type ProblemCode } from "../problem.js";

/** A CSV larger than this is refused before it is read: about a million rows of a campaign. */
export const ROWS_FILE_MAX_BYTES = 256 * 1024 * 1024;

/** What `rows:` may set besides the file. */
export interface RowsOptions {
  /** One character; by default the one of `,` `;` and tab that the header line uses most. */
  readonly delimiter?: string;
}

export interface Place {
  readonly line: number;
  readonly col: number;
}

export interface Row {
  /** The physical line where the row starts. */
  readonly line: number;
  readonly values: readonly string[];
  /** Where the row starts in the table's text (its places are found from there when asked). */
  readonly offset: number;
}

export interface RowsTable {
  /** The file, absolute. */
  readonly file: string;
  /** Its text (line ends as LF), for code frames. */
  readonly text: string;
  readonly header: readonly string[];
  readonly headerPlaces: readonly Place[];
  readonly rows: readonly Row[];
  /**
   * Where a field of `row` starts, by column index. Found when a problem is said rather than kept
   * for every cell: a campaign has hundreds of thousands.
   */
  placeOf(row: Row, column: number): Place;
}

export type RowsRead =
  | { ok: true; table: RowsTable }
  | {
      ok: false;
      message: string;
      code: ProblemCode;
      /** In the CSV when known (the file, absolute, and the place); else at the `rows:` field. */
      at?: { file: string; text: string } & Place;
    };

const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads and parses `written` (relative to `manifestDir`) if it is inside one of `allowedReal`. */
export async function readRowsFile(
  written: string,
  manifestDir: string,
  cwd: string,
  allowed: readonly string[],
  options: RowsOptions,
): Promise<RowsRead> {
  const abs = path.resolve(manifestDir, written);
  const refuse = (message: string, code: ProblemCode = PROBLEM_CODES.fileUnreadable): RowsRead => ({
    ok: false,
    message: `rows ${message}`,
    code,
  });
  const outside = `${written} is outside the folder reel was started in (${cwd}); allow it with --allow-read DIR`;
  if (!allowed.some((dir) => isInside(abs, dir))) return refuse(outside, PROBLEM_CODES.pathOutside);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      return refuse(`${JSON.stringify(written)} does not exist`, PROBLEM_CODES.fileMissing);
    return refuse(`${written} could not be read: ${(error as Error).message}`);
  }
  const allowedReal = await Promise.all(allowed.map((dir) => realpath(dir).catch(() => dir)));
  if (!allowedReal.some((dir) => isInside(real, dir)))
    return refuse(
      `${written} is a link to ${real}, outside the folder reel was started in (${cwd}); allow it with --allow-read DIR`,
      PROBLEM_CODES.pathOutside,
    );
  let bytes: Buffer;
  try {
    const handle = await openNoFollow(real);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return refuse(`${written} is not a file`);
      if (info.size > ROWS_FILE_MAX_BYTES)
        return refuse(
          `${written} is ${info.size} bytes; a rows file may have at most ${ROWS_FILE_MAX_BYTES} (split the campaign into several manifests)`,
          PROBLEM_CODES.tooLarge,
        );
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const why = isLinkRefusal(error)
      ? "it was replaced by a link while it was read"
      : (error as Error).message;
    return refuse(`${written} could not be read: ${why}`);
  }
  return parseRows(bytes, real, options);
}

/** The table of a CSV file's bytes (see the top of the file). */
export async function parseRows(bytes: Buffer, file: string, options: RowsOptions): Promise<RowsRead> {
  // One line break for all (CRLF from spreadsheet programs, a lone CR from old Macs): the parser
  // then counts lines as an editor shows them, and a quoted line break reads as "\n".
  const text = bytes
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n");
  const at = (place: Place, message: string, code: ProblemCode = PROBLEM_CODES.invalidValue): RowsRead => ({
    ok: false,
    message,
    code,
    at: { file, text, ...place },
  });
  if (!isUtf8(bytes)) {
    const bad = text.indexOf("\uFFFD");
    return at(
      placeOf(text, Math.max(0, bad)),
      "the file is not UTF-8 text (Latin-1, or a spreadsheet's legacy encoding?); export it as CSV UTF-8",
      PROBLEM_CODES.readFailed,
    );
  }
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? text.length : text.indexOf("\n"));
  const delimiter = options.delimiter ?? guessDelimiter(firstLine);
  // Loaded here, not with the manifest's code: most manifests have no rows file.
  const { parse } = await import("csv-parse/sync");
  let records: string[][];
  try {
    records = parse(text, {
      delimiter,
      relax_quotes: false,
      relax_column_count: false,
      skip_empty_lines: true,
    }) as string[][];
  } catch (error) {
    const e = error as { code?: string; lines?: number; message: string };
    const line = e.lines ?? 1;
    const why =
      e.code === "CSV_QUOTE_NOT_CLOSED"
        ? 'a quoted field is never closed: a " is missing (a quote inside a quoted field is written twice, "")'
        : e.code === "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH"
          ? `this row has a different number of fields from the header line (${e.message.replace(/^.*expect (\d+), got (\d+).*$/s, "$2, not $1")}); a field that holds ${JSON.stringify(delimiter)} must be quoted`
          : e.code === "INVALID_OPENING_QUOTE" || e.code === "CSV_INVALID_CLOSING_QUOTE"
            ? 'a quote in the middle of a field: quote the whole field and write the quote twice ("say ""hi""")'
            : e.message;
    const opened = e.code === "CSV_QUOTE_NOT_CLOSED" ? lastOpenQuote(text, delimiter) : undefined;
    return at(opened ?? { line, col: 1 }, why, PROBLEM_CODES.readFailed);
  }
  const starts = recordStarts(text, delimiter);
  if (records.length === 0)
    return at({ line: 1, col: 1 }, "the file is empty: it needs a header line of column names");
  const [header, ...body] = records;
  if (starts.length !== records.length)
    return at({ line: 1, col: 1 }, "the file could not be read as CSV", PROBLEM_CODES.readFailed);
  const headerPlaces = placesOfRecord(text, delimiter, starts[0]!);
  const seen = new Map<string, number>();
  for (const [i, name] of header!.entries()) {
    const place = headerPlaces[i]!;
    if (name.trim() === "")
      return at(place, `column ${i + 1} of the header line has no name; name every column`);
    if (!PLACEHOLDER_NAME.test(name))
      return at(
        place,
        `column name ${JSON.stringify(name)} can't be a placeholder: letters, digits and _, not starting with a digit`,
      );
    if (seen.has(name)) return at(place, `column ${name} is named twice in the header line`);
    seen.set(name, i);
  }
  const rows: Row[] = [];
  body.forEach((values, i) => {
    // A line of empty fields (";;;" at the end of a spreadsheet's export) is no row.
    if (values.every((value) => value === "")) return;
    const start = starts[i + 1]!;
    rows.push({ line: start.line, values, offset: start.offset });
  });
  const fieldPlace = (row: Row, column: number): Place =>
    placesOfRecord(text, delimiter, row, column + 1)[column] ?? { line: row.line, col: 1 };
  return { ok: true, table: { file, text, header: header!, headerPlaces, rows, placeOf: fieldPlace } };
}

/** The one of `,` `;` and tab that the header line holds most (outside quotes), `,` if none. */
function guessDelimiter(line: string): string {
  const unquoted = line.replace(/"[^"]*"/g, "");
  let best = ",";
  let most = 0;
  for (const candidate of [",", ";", "\t"]) {
    const count = unquoted.split(candidate).length - 1;
    if (count > most) [best, most] = [candidate, count];
  }
  return best;
}

function placeOf(text: string, offset: number): Place {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, col: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

/** Where a record starts: its offset in the text and its line. */
interface RecordStart {
  readonly offset: number;
  readonly line: number;
}

/**
 * Walks the fields of `text` from `start` (where a record starts), calling `field` with the place of
 * each field's start (physical line, character column, a quoted line break counted) and its record,
 * counted from 0 at `start`, until it returns true. Empty lines are skipped as the parser skips
 * them. It only finds places in a text the parser has read without error; the values are the
 * parser's.
 */
function walkFields(
  text: string,
  delimiter: string,
  start: RecordStart,
  field: (record: number, line: number, col: number, offset: number) => boolean,
): void {
  const single = delimiter.length === 1 ? delimiter.charCodeAt(0) : -1;
  let line = start.line;
  let col = 1;
  let record = -1;
  let inRecord = false;
  let quoted = false;
  let fieldStart = true;
  for (let i = start.offset; i < text.length;) {
    const code = text.charCodeAt(i);
    // Columns count characters: a pair of surrogates is one.
    const width =
      code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
        ? 2
        : 1;
    if (fieldStart && !quoted) {
      if (!inRecord) {
        if (code === 10) {
          line++;
          col = 1;
          i++;
          continue;
        }
        inRecord = true;
        record++;
      }
      if (field(record, line, col, i)) return;
      fieldStart = false;
    }
    if (code === 34) quoted = !quoted;
    else if (!quoted && (single >= 0 ? code === single : text.startsWith(delimiter, i))) fieldStart = true;
    else if (!quoted && code === 10) {
      inRecord = false;
      fieldStart = true;
    }
    if (code === 10) {
      line++;
      col = 1;
    } else col++;
    i += width;
  }
  // An empty last field at the end of a file without a final line break ("1,").
  if (inRecord && fieldStart) field(record, line, col, text.length);
}

/** Where each record of `text` starts, in the records' order. */
function recordStarts(text: string, delimiter: string): RecordStart[] {
  const out: RecordStart[] = [];
  walkFields(text, delimiter, { offset: 0, line: 1 }, (record, line, _col, offset) => {
    if (record === out.length) out.push({ offset, line });
    return false;
  });
  return out;
}

/** Where the first `max` fields of the record at `start` start. */
function placesOfRecord(text: string, delimiter: string, start: RecordStart, max = Infinity): Place[] {
  const out: Place[] = [];
  walkFields(text, delimiter, start, (record, line, col) => {
    if (record > 0 || out.length >= max) return true;
    out.push({ line, col });
    return false;
  });
  return out;
}

/** Where the quote that is never closed opens. */
function lastOpenQuote(text: string, delimiter: string): Place | undefined {
  let quoted = false;
  let opened = 0;
  let previous = "\n";
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      if (!quoted && (previous === delimiter || previous === "\n")) opened = i;
      quoted = !quoted;
    }
    previous = char;
  }
  return quoted ? placeOf(text, opened) : undefined;
}
