// A video's `matrix:` read and checked (its axes, the combinations `exclude` leaves out, the
// placeholders each axis gives), its combinations walked in order, and counted without expanding.
import { show } from "../validate/messages.js";
import type { PathSegment } from "../parse/locate.js";
import { PROBLEM_CODES, type ProblemCode } from "../problem.js";
import { isRecord } from "../../values.js";

/** No template expands to more videos than this: a typo in a list should not make a million jobs. */
export const MATRIX_MAX_VIDEOS = 10_000;

/** The keys of `matrix:` that are not axes. */
const EXCLUDE = "exclude";
const RESERVED = new Set([EXCLUDE, "include"]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export type Scalar = string | number | boolean;
/** One combination: every placeholder's value. */
export type Combination = Readonly<Record<string, Scalar>>;

/** A problem of a matrix or rows video, at its template's path (or at a rows file's cell). */
export interface MatrixProblem {
  readonly path: readonly PathSegment[];
  readonly message: string;
  readonly code: ProblemCode;
  /** A rows file that is not there (absolute): a watcher waits for it. */
  readonly media?: string;
  /** Said in another file than the manifest (a cell of a rows CSV): absolute, with its text. */
  readonly at?: { readonly file: string; readonly text: string; readonly line: number; readonly col: number };
}

const isScalar = (value: unknown): value is Scalar =>
  typeof value === "string" ||
  (typeof value === "number" && Number.isFinite(value)) ||
  typeof value === "boolean";

interface Axis {
  readonly name: string;
  /** Each item's placeholders. */
  readonly items: readonly Combination[];
}

/** A video's `matrix:` read and checked, not yet expanded. */
export interface ReadMatrix {
  readonly axes: readonly Axis[];
  readonly excludes: readonly Combination[];
  /** Each placeholder's axis. */
  readonly givenBy: ReadonlyMap<string, string>;
  readonly problems: MatrixProblem[];
}

export function readMatrix(video: Record<string, unknown>, at: readonly PathSegment[]): ReadMatrix {
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
export function* combinations(
  axes: readonly Axis[],
  excludes: readonly Combination[],
): Generator<Combination> {
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
