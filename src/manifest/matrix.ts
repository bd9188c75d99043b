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
import { didYouMean } from "../edit-distance.js";
import { show } from "./messages.js";
import { convertCell, rowsIdProblem } from "./rows.js";
import type { Row, RowsTable } from "./rows-file.js";
import type { PathSegment } from "./locate.js";
import { PROBLEM_CODES, type ProblemCode } from "./problem.js";
import { isRecord } from "../values.js";

/** No template expands to more videos than this: a typo in a list should not make a million jobs. */
export const MATRIX_MAX_VIDEOS = 10_000;

/** The keys of `matrix:` that are not axes. */
const EXCLUDE = "exclude";
const RESERVED = new Set([EXCLUDE, "include"]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

type Scalar = string | number | boolean;
/** One combination: every placeholder's value. */
export type Combination = Readonly<Record<string, Scalar>>;

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

export interface MatrixProblem {
  readonly path: readonly PathSegment[];
  readonly message: string;
  readonly code: ProblemCode;
  /** A rows file that is not there (absolute): a watcher waits for it. */
  readonly media?: string;
  /** Said in another file than the manifest (a cell of a rows CSV): absolute, with its text. */
  readonly at?: { readonly file: string; readonly text: string; readonly line: number; readonly col: number };
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

const isScalar = (value: unknown): value is Scalar =>
  typeof value === "string" ||
  (typeof value === "number" && Number.isFinite(value)) ||
  typeof value === "boolean";

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

interface Axis {
  readonly name: string;
  /** Each item's placeholders. */
  readonly items: readonly Combination[];
}

/** A video's `matrix:` read and checked, not yet expanded. */
interface ReadMatrix {
  readonly axes: readonly Axis[];
  readonly excludes: readonly Combination[];
  /** Each placeholder's axis. */
  readonly givenBy: ReadonlyMap<string, string>;
  readonly problems: MatrixProblem[];
}

function readMatrix(video: Record<string, unknown>, at: readonly PathSegment[]): ReadMatrix {
  const problems: MatrixProblem[] = [];
  const problem = (
    path: readonly PathSegment[],
    message: string,
    code: ProblemCode = PROBLEM_CODES.invalidValue,
  ) => problems.push({ path, message, code });
  const matrixAt = [...at, "matrix"];
  const matrix = video.matrix;
  if (matrix === undefined && "rows" in video)
    return { axes: [], excludes: [], givenBy: new Map(), problems };
  if (!isRecord(matrix)) {
    problem(matrixAt, "matrix takes named lists, e.g. `matrix: { lang: [en, de] }`");
    return { axes: [], excludes: [], givenBy: new Map(), problems };
  }

  const axes: Axis[] = [];
  for (const [name, list] of Object.entries(matrix)) {
    if (name === EXCLUDE) continue;
    const axisAt = [...matrixAt, name];
    if (RESERVED.has(name)) {
      problem(
        axisAt,
        `matrix ${name} is not supported; write the extra video out in videos`,
        PROBLEM_CODES.unknownField,
      );
      continue;
    }
    if (!NAME.test(name)) {
      problem(
        axisAt,
        `matrix axis ${show(name)} can't be a placeholder name: letters, digits and _, not starting with a digit`,
      );
      continue;
    }
    if (!Array.isArray(list) || list.length === 0) {
      problem(axisAt, `matrix axis ${name} takes a list of at least one value, e.g. ${name}: [a, b]`);
      continue;
    }
    const items: Combination[] = [];
    list.forEach((item: unknown, i) => {
      const itemAt = [...axisAt, i];
      if (isScalar(item)) items.push({ [name]: item });
      else if (isRecord(item)) {
        if (!(name in item)) {
          problem(
            itemAt,
            `an item of axis ${name} that is a mapping needs a ${name} key: its value is {${name}}`,
            PROBLEM_CODES.missingField,
          );
          return;
        }
        const values: Record<string, Scalar> = {};
        for (const [key, value] of Object.entries(item)) {
          if (!NAME.test(key))
            problem([...itemAt, key], `${show(key)} can't be a placeholder name: letters, digits and _`);
          else if (!isScalar(value))
            problem([...itemAt, key], `the value of {${key}} must be a text, a number or true/false`);
          else values[key] = value;
        }
        items.push(values);
      } else problem(itemAt, `an item of axis ${name} is a value (a text, a number) or a mapping of values`);
    });
    axes.push({ name, items });
  }
  if (axes.length === 0 && problems.length === 0)
    problem(matrixAt, "matrix names no axis, e.g. `matrix: { lang: [en, de] }`");

  // Two axes may not give the same placeholder: which would win is a guess.
  const givenBy = new Map<string, string>();
  for (const axis of axes) {
    for (const key of new Set(axis.items.flatMap((item) => Object.keys(item)))) {
      const other = givenBy.get(key);
      if (other !== undefined && other !== axis.name)
        problem(
          [...matrixAt, axis.name],
          `{${key}} is given by both axis ${other} and axis ${axis.name}; rename one`,
        );
      givenBy.set(key, axis.name);
    }
  }

  // The id names every axis, or two expanded videos would share one.
  if (typeof video.id === "string") {
    const named = placeholdersOf(video.id);
    const missing = axes.filter((axis) => !named.has(axis.name)).map((axis) => `{${axis.name}}`);
    if (missing.length > 0)
      problem(
        [...at, "id"],
        `the id of a matrix video must name every axis so that each video's id is unique: add ${missing.join(" and ")}`,
      );
  }

  const excludes = excludesOf(matrix[EXCLUDE], [...matrixAt, EXCLUDE], axes, problem);
  const total = axes.reduce((product, axis) => product * axis.items.length, 1);
  if (total > MATRIX_MAX_VIDEOS)
    problem(
      matrixAt,
      `this matrix makes ${total} videos; one video may expand to at most ${MATRIX_MAX_VIDEOS} (split it, or shorten a list)`,
    );
  return { axes, excludes, givenBy, problems };
}

/** The placeholders' values of every combination of `axes` that `excludes` leaves in, in order. */
function* combinations(axes: readonly Axis[], excludes: readonly Combination[]): Generator<Combination> {
  for (const picks of crossProduct(axes)) {
    const values: Record<string, Scalar> = Object.assign({}, ...picks);
    if (
      excludes.some((ex) => Object.entries(ex).every(([key, value]) => String(values[key]) === String(value)))
    )
      continue;
    yield values;
  }
}

/**
 * How many videos a matrix video expands to, `takesOf` each (the takes of one combination), without
 * expanding it: 0 when its matrix has a problem, as it then expands to nothing. At most
 * MATRIX_MAX_VIDEOS combinations are walked, and only when some are excluded or the takes differ.
 */
export function countMatrixVideos(
  video: Record<string, unknown>,
  takesOf: number | ((values: Combination) => number),
): number {
  const { axes, excludes, problems } = readMatrix(video, []);
  if (problems.length > 0) return 0;
  if (excludes.length === 0 && typeof takesOf === "number")
    return axes.reduce((product, axis) => product * axis.items.length, takesOf);
  let count = 0;
  for (const values of combinations(axes, excludes))
    count += typeof takesOf === "number" ? takesOf : takesOf(values);
  return count;
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

function excludesOf(
  value: unknown,
  at: readonly PathSegment[],
  axes: readonly Axis[],
  problem: (path: readonly PathSegment[], message: string, code?: ProblemCode) => void,
): Combination[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problem(at, "exclude takes a list of combinations, e.g. exclude: [{lang: de, face: ben}]");
    return [];
  }
  const names = new Set(axes.map((axis) => axis.name));
  const out: Combination[] = [];
  value.forEach((item: unknown, i) => {
    if (!isRecord(item) || Object.keys(item).length === 0) {
      problem([...at, i], "an exclude entry is a mapping of axes to values, e.g. {lang: de, face: ben}");
      return;
    }
    for (const [key, v] of Object.entries(item)) {
      if (!names.has(key))
        problem(
          [...at, i, key],
          `exclude names ${show(key)}, which is not an axis of this matrix (${[...names].join(", ")})`,
          PROBLEM_CODES.unknownField,
        );
      else if (!isScalar(v))
        problem([...at, i, key], `exclude gives an axis its value (a text or a number), not ${show(v)}`);
    }
    out.push(item as Combination);
  });
  return out;
}

function* crossProduct(axes: readonly Axis[]): Generator<Combination[]> {
  const picks: Combination[] = [];
  function* walk(depth: number): Generator<Combination[]> {
    if (depth === axes.length) {
      yield [...picks];
      return;
    }
    for (const item of axes[depth]!.items) {
      picks.push(item);
      yield* walk(depth + 1);
      picks.pop();
    }
  }
  yield* walk(0);
}

function placeholdersOf(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(PLACEHOLDER)) if (match[1] !== undefined) names.add(match[1]);
  return names;
}

/**
 * A value of a template, read once: what of it has placeholders, where (its path), and the rest kept
 * as it is, shared by every video filled from it (nothing changes an expanded value afterwards).
 */
type Compiled =
  | { readonly kind: "same"; readonly value: unknown }
  | {
      readonly kind: "whole";
      readonly name: string;
      readonly text: string;
      readonly path: readonly PathSegment[];
      readonly key: string;
    }
  | {
      readonly kind: "text";
      /** Literal texts (braces unescaped) and placeholders, in order. */
      readonly parts: readonly (string | { readonly name: string; readonly match: string })[];
      readonly path: readonly PathSegment[];
      readonly key: string;
    }
  | { readonly kind: "array"; readonly items: readonly Compiled[] }
  | { readonly kind: "record"; readonly keys: readonly string[]; readonly items: readonly Compiled[] };

const WHOLE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** `value` read as a template (see the top of the file); `fresh`: a new object even with no placeholder. */
function compileTemplate(value: unknown, path: readonly PathSegment[], fresh = false): Compiled {
  if (typeof value === "string") {
    const whole = WHOLE.exec(value);
    if (whole) return { kind: "whole", name: whole[1]!, text: value, path, key: path.join("/") };
    const parts: (string | { name: string; match: string })[] = [];
    let last = 0;
    let literal = "";
    for (const match of value.matchAll(PLACEHOLDER)) {
      literal += value.slice(last, match.index);
      last = match.index + match[0].length;
      if (match[1] === undefined) literal += match[0] === "{{" ? "{" : "}";
      else {
        if (literal !== "") parts.push(literal);
        literal = "";
        parts.push({ name: match[1], match: match[0] });
      }
    }
    if (last === 0) return { kind: "same", value };
    literal += value.slice(last);
    if (literal !== "") parts.push(literal);
    return { kind: "text", parts, path, key: path.join("/") };
  }
  if (Array.isArray(value)) {
    const items = value.map((item: unknown, i) => compileTemplate(item, [...path, i]));
    return !fresh && items.every((item) => item.kind === "same")
      ? { kind: "same", value }
      : { kind: "array", items };
  }
  if (isRecord(value)) {
    const keys = Object.keys(value);
    const items = keys.map((key) => compileTemplate(value[key], [...path, key]));
    // Copied as an assignment would ("__proto__" included), as every filled record is.
    const same = !fresh && !keys.includes("__proto__") && items.every((item) => item.kind === "same");
    return same ? { kind: "same", value } : { kind: "record", keys, items };
  }
  return { kind: "same", value };
}

/** What filling a template needs: the combination's values, and where its problems go. */
interface Filling {
  readonly values: Combination;
  readonly known: ReadonlyMap<string, string>;
  /** As named in messages. */
  readonly combination: string;
  /** Problems of placeholders already said, by path and name. */
  readonly placed: Set<string>;
  readonly unknown: (name: string) => string;
  /** A row's cell as the field's type, for a text that is exactly one column's placeholder. */
  readonly convert: (path: readonly PathSegment[], name: string) => Scalar | undefined;
  readonly problem?: (path: readonly PathSegment[], message: string, code?: ProblemCode) => void;
}

/** `compiled` with every placeholder replaced by its value (see the top of the file). */
function fill(compiled: Compiled, filling: Filling): unknown {
  switch (compiled.kind) {
    case "same":
      return compiled.value;
    case "whole": {
      const converted = filling.convert(compiled.path, compiled.name);
      if (converted !== undefined) return converted;
      const found = filling.values[compiled.name];
      if (found === undefined) missing(compiled, compiled.name, filling);
      return found ?? compiled.text;
    }
    case "text": {
      let out = "";
      for (const part of compiled.parts) {
        if (typeof part === "string") {
          out += part;
          continue;
        }
        const found = filling.values[part.name];
        if (found === undefined) {
          missing(compiled, part.name, filling);
          out += part.match;
        } else out += String(found);
      }
      return out;
    }
    case "array":
      return compiled.items.map((item) => fill(item, filling));
    case "record": {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < compiled.keys.length; i++)
        out[compiled.keys[i]!] = fill(compiled.items[i]!, filling);
      return out;
    }
  }
}

/** A placeholder without a value: said once per path and name. */
function missing(
  compiled: { readonly path: readonly PathSegment[]; readonly key: string },
  name: string,
  filling: Filling,
): void {
  const key = `${compiled.key}\n${name}`;
  if (filling.placed.has(key)) return;
  filling.placed.add(key);
  filling.problem?.(
    compiled.path,
    filling.known.has(name)
      ? `{${name}} has no value for ${filling.combination}: give every item of axis ${filling.known.get(name)} a ${name} key`
      : filling.unknown(name),
  );
}
