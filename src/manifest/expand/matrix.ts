// Campaign forms: a video's `matrix:` is expanded to the cross product of its named lists
// before the manifest is validated, so that every expanded video is checked like a written one (the
// schema, the per-model rules, its files). The expansion keeps each video's shape: a field of an
// expanded video sits at the same path as in its template, so a problem found in it is placed at the
// template's line (load.ts maps the video's index back, and names the combination).
//
//   - id: promo-{lang}-{face}
//     matrix:
//       lang: [en, de]                              # {lang}
//       face: [{face: anna, voice: 17}, {face: ben, voice: 18}]   # {face} and {voice}
//       exclude: [{lang: de, face: ben}]            # combinations left out (GitHub Actions' form)
//
// Placeholders `{name}` stand in any text of the video (id, texts, speech, voices, paths, assets);
// a text that is exactly one placeholder takes the value as written (a number stays a number), and
// `{{` / `}}` write a brace. The id must name every axis, so expanded ids stay unique.
import path from "node:path";
import { didYouMean } from "../../edit-distance.js";
import { convertCell, rowsIdProblem } from "./rows.js";
import type { Row, RowsTable } from "./rows-file.js";
import type { PathSegment } from "../parse/locate.js";
import {
  type Combination,
  combinations,
  type MatrixProblem,
  readMatrix,
  type Scalar,
} from "./matrix-axes.js";
import { PROBLEM_CODES, type ProblemCode } from "../problem.js";
import { compileTemplate, fill } from "./template-fill.js";
import { isRecord } from "../../values.js";

export { type Combination, countMatrixVideos, MATRIX_MAX_VIDEOS, type MatrixProblem } from "./matrix-axes.js";

/** Where an expanded video comes from. */
export interface VideoOrigin {
  /** Its index among the videos as written. */
  readonly index: number;
  /** Its axes' values (matrix videos only), as named in messages: "lang=de, face=ben". */
  readonly combination?: string;
  /** The row it was made from (videos with `rows:`). */
  readonly row?: { readonly table: RowsTable; readonly row: Row };
  /** Its placeholders' values (matrix videos only): the variables `reel export` puts in its sheet. */
  readonly values?: Combination;
}

/** A video's rows as read (rows-file.ts), or why they could not be. */
export type RowsOfVideo = RowsTable | MatrixProblem;

export interface Expansion {
  /** The manifest with each matrix video replaced by its videos, in order; `raw` itself if none. */
  readonly value: unknown;
  /** The videos as written that took the chunks of defaults (default-chunks.ts), by index. */
  readonly inheritedChunks: ReadonlySet<number>;
  /** For each video of `value`, where it comes from. */
  readonly origins: readonly VideoOrigin[];
  /** Problems of the matrices, at their template paths; a template with one expands to nothing. */
  readonly problems: readonly MatrixProblem[];
}

/** A video written as a template: of a matrix, of rows or both. */
const expands = (video: Record<string, unknown>): boolean => "matrix" in video || "rows" in video;

/** Expands every video of `raw` that has a `matrix:` (see above). */
export function expandMatrices(
  raw: unknown,
  inheritedChunks: ReadonlySet<number> = new Set(),
  rowsOf: ReadonlyMap<number, RowsOfVideo> = new Map(),
): Expansion {
  if (!isRecord(raw) || !Array.isArray(raw.videos) || !raw.videos.some((v) => isRecord(v) && expands(v))) {
    const count = isRecord(raw) && Array.isArray(raw.videos) ? raw.videos.length : 0;
    return {
      value: raw,
      inheritedChunks,
      origins: Array.from({ length: count }, (_, index) => ({ index })),
      problems: [],
    };
  }
  const problems: MatrixProblem[] = [];
  const videos: unknown[] = [];
  const origins: VideoOrigin[] = [];
  raw.videos.forEach((video: unknown, index) => {
    if (!isRecord(video) || !expands(video)) {
      videos.push(video);
      origins.push({ index });
      return;
    }
    const rows = rowsOf.get(index);
    if (rows !== undefined && !("header" in rows)) {
      problems.push(rows);
      return;
    }
    const found = expandVideo(video, ["videos", index], rows);
    problems.push(...found.problems);
    for (const made of found.videos) {
      videos.push(made.video);
      origins.push({
        index,
        combination: made.combination,
        values: made.values,
        ...(made.row ? { row: made.row } : {}),
      });
    }
  });
  return { value: { ...raw, videos }, inheritedChunks, origins, problems };
}

type Made = {
  video: unknown;
  combination: string;
  /** Its placeholders' values: the row's columns and the matrix's (the variables `reel export` puts in its sheet). */
  values: Combination;
  row?: { table: RowsTable; row: Row };
};

function expandVideo(
  video: Record<string, unknown>,
  at: readonly PathSegment[],
  table?: RowsTable,
): { videos: Made[]; problems: MatrixProblem[] } {
  const { axes, excludes, givenBy, problems } = readMatrix(video, at);
  const problem = (
    path: readonly PathSegment[],
    message: string,
    code: ProblemCode = PROBLEM_CODES.invalidValue,
  ) => problems.push({ path, message, code });
  const none = { videos: [], problems };
  const known = new Map<string, string>(givenBy);
  if (table) {
    const fileName = path.basename(table.file);
    for (const [i, column] of table.header.entries()) {
      if (givenBy.has(column))
        problems.push({
          path: [...at, "rows"],
          message: `{${column}} is given by both the matrix (axis ${givenBy.get(column)}) and a column of ${fileName}; rename one`,
          code: PROBLEM_CODES.invalidValue,
          at: { file: table.file, text: table.text, ...table.headerPlaces[i]! },
        });
      known.set(column, `column of ${fileName}`);
    }
    const idProblem = rowsIdProblem(video.id, table);
    if (idProblem !== undefined) problem([...at, "id"], idProblem);
  }
  if (problems.length > 0) return none;

  const template = Object.fromEntries(
    Object.entries(video).filter(([key]) => key !== "matrix" && key !== "rows"),
  );
  const placed = new Set<string>(); // problems of placeholders, once per path
  const unknown = (name: string): string => {
    if (!table)
      return `unknown placeholder {${name}}; this matrix gives ${[...known.keys()].map((k) => `{${k}}`).join(", ")} (write {{ for a brace)`;
    const near = didYouMean(name, [...known.keys()]);
    const matrixNames = [...givenBy.keys()];
    return `unknown placeholder {${name}}: ${path.basename(table.file)} has no such column${near ? `; did you mean {${near}}?` : ""} Its columns: ${table.header.join(", ")}${matrixNames.length > 0 ? `; the matrix gives ${matrixNames.map((k) => `{${k}}`).join(", ")}` : ""} (write {{ for a brace)`;
  };
  // Compiled once, filled for every row and combination: the template's shape, paths and
  // placeholders are the same for each.
  const compiled = compileTemplate(template, at, true);
  const idAt = [...at, "id"];
  const compiledId = compileTemplate(video.id, idAt);
  /** The id with `values` filled in, as a row's key or to name a video in a message. */
  const idPlaced = new Set<string>(); // nothing is said of the id here: its problems are the template's
  const noConversion = (): undefined => undefined;
  const idWith = (values: Combination, combination: string): unknown =>
    fill(compiledId, { values, known, combination, placed: idPlaced, unknown, convert: noConversion });
  const combos = [...combinations(axes, excludes)];
  const axisValuesOf = combos.map((values) =>
    axes.map((axis) => `${axis.name}=${String(values[axis.name]!)}`),
  );
  const videos: Made[] = [];
  const rows: readonly (Row | undefined)[] = table ? table.rows : [undefined];
  const fileName = table ? path.basename(table.file) : "";
  const keys = new Map<string, Row>(); // a row's id (its key columns' values) -> the first row with it
  for (const row of rows) {
    let rowValues: Record<string, string> = {};
    let rowName = "";
    if (table && row) {
      rowValues = {};
      for (let i = 0; i < table.header.length; i++) rowValues[table.header[i]!] = row.values[i]!;
      rowName = `${fileName}:${row.line}`;
      const key = idWith(rowValues, rowName);
      const first = keys.get(String(key));
      if (first) {
        const column = table.header.findIndex((c) => String(video.id).includes(`{${c}}`));
        problems.push({
          path: idAt,
          message: `${String(key)}: lines ${first.line} and ${row.line} of ${fileName} make the same id; the id's column (${table.header[column]}) must hold a different value in every row`,
          code: PROBLEM_CODES.duplicateId,
          at: { file: table.file, text: table.text, ...table.placeOf(row, Math.max(0, column)) },
        });
        continue;
      }
      keys.set(String(key), row);
    }
    combos.forEach((values, c) => {
      const combination = rowName
        ? axes.length === 0
          ? rowName
          : [rowName, ...axisValuesOf[c]!].join(", ")
        : axisValuesOf[c]!.join(", ");
      // A row's own object when there is no matrix: one object per video, not two.
      const all = !table ? values : axes.length === 0 ? rowValues : { ...rowValues, ...values };
      let bad = false;
      const convert =
        table && row
          ? (where: readonly PathSegment[], name: string): Scalar | undefined => {
              const column = table.header.indexOf(name);
              if (column < 0 || name in values) return undefined;
              const converted = convertCell(where, row.values[column]!);
              if (converted.ok) return converted.value;
              bad = true;
              const id = idWith(all, combination);
              const field = where[where.length - 1];
              problems.push({
                path: where,
                message: `${String(id)}: ${name === field ? "" : `column ${name}, as `}${converted.message}`,
                code: PROBLEM_CODES.invalidValue,
                at: { file: table.file, text: table.text, ...table.placeOf(row, column) },
              });
              return undefined;
            }
          : noConversion;
      const expanded = fill(compiled, { values: all, known, combination, placed, unknown, convert, problem });
      if (bad) return;
      videos.push({
        video: expanded,
        combination,
        values: all,
        ...(table && row ? { row: { table, row } } : {}),
      });
    });
  }
  const bad = problems.some((p) => p.at === undefined);
  return bad ? none : { videos, problems };
}
