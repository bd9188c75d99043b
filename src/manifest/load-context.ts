// What the parts of loading one manifest share, made by load-file.ts once the file is parsed and its
// videos expanded: the file, its text and parsed value, the expansion, the problems and warnings
// found so far, and `place`, which says a problem where the user wrote it. Each part (resolve-refs.ts,
// file-checks.ts) is a function of this context and holds no state of its own.
import { shownPath } from "../user-path.js";
import { locate, type PathSegment, type Position } from "./parse/locate.js";
import type { Expansion } from "./expand/matrix.js";
import { ExpansionProblems, templatePath } from "./expand/matrix-places.js";
import { valueAt } from "./validate/messages.js";
import type { ParsedYaml } from "./parse/parse-yaml.js";
import type { Problem, Warning } from "./problem.js";
import { cellOf } from "./expand/rows-of-videos.js";
import type { NormalizedManifest } from "./types.js";

export interface FileOutcome {
  manifest?: NormalizedManifest;
  text?: string;
  problems: Problem[];
  warnings?: Warning[];
  /** The manifest's name and, lazily, where it is written (1:1 when it comes from the file name). */
  name?: { name: string; position: () => { line: number; col: number } };
  /** Refused for taking the run past the video limit: its count, and the video that passes it. */
  overRun?: { count: number; line: number; col: number };
  /** The texts of other files problems are placed in (a rows CSV), by the name problems give. */
  sources?: Map<string, string>;
}

type Target = "value" | "key";

/** What load-file.ts gives to make the context. */
export interface FileContextGiven {
  /** The file, absolute. */
  readonly abs: string;
  /** The file as problems name it. */
  readonly file: string;
  /** The folder reel was started in. */
  readonly cwd: string;
  readonly text: string;
  readonly parsed: ParsedYaml;
  /** The value as written, defaults' chunks in (default-chunks.ts). */
  readonly written: unknown;
  readonly expansion: Expansion;
  readonly problems: Problem[];
  readonly warnings: Warning[];
}

export interface FileContext extends FileContextGiven {
  /** The manifest with its matrix and rows videos expanded: what is validated and normalized. */
  readonly raw: unknown;
  /** The texts of other files problems are placed in (a rows CSV), by the name problems give. */
  readonly sources: Map<string, string>;
  /** Where a path of the expanded manifest is written (an expanded video's at its template). */
  at(path: readonly PathSegment[], target?: Target): Position;
  /** Where a path of the manifest as written is. */
  atTemplate(path: readonly PathSegment[], target?: Target): Position;
  /**
   * Says a problem at a path of the expanded manifest: at a row's cell when the field took its value
   * from one, else at the template, once per place and message (matrix-places.ts).
   */
  place(
    path: readonly PathSegment[],
    message: string,
    code: Problem["code"],
    target?: Target,
    media?: string,
  ): void;
}

export function makeFileContext(given: FileContextGiven): FileContext {
  const { file, parsed, expansion, problems } = given;
  const raw = expansion.value;
  const sources = new Map<string, string>();
  const atTemplate = (p: readonly PathSegment[], target: Target = "value") => locate(parsed, p, target);
  const at = (p: readonly PathSegment[], target: Target = "value") =>
    atTemplate(templatePath(expansion, p), target);

  // A problem of an expanded video names it and its combination, once per place and message.
  const inExpansion = new ExpansionProblems(expansion, raw);
  const cellsSaid = new Set<string>();
  const place = (
    p: readonly PathSegment[],
    message: string,
    code: Problem["code"],
    target: "value" | "key" = "value",
    media?: string,
  ) => {
    // A field of a row's video that took its value from a cell is wrong in the CSV: said at the cell.
    const origin = p[0] === "videos" ? expansion.origins[Number(p[1])] : undefined;
    if (origin?.row) {
      const { table, row } = origin.row;
      const cell = cellOf(valueAt(given.written, templatePath(expansion, p)), table, row);
      if (cell) {
        const inFile = shownPath(given.cwd, table.file);
        const key = `${inFile}:${cell.line}:${cell.col}\n${message}`;
        if (cellsSaid.has(key)) return;
        cellsSaid.add(key);
        sources.set(inFile, table.text);
        const id = valueAt(raw, ["videos", p[1]!, "id"]);
        const field = p.filter((segment) => typeof segment === "string").at(-1);
        const column = cell.column === field ? "" : `column ${cell.column}, as `;
        problems.push({
          file: inFile,
          line: cell.line,
          col: cell.col,
          message: `${typeof id === "string" ? `${id}: ` : ""}${column}${message}`,
          code,
        });
        return;
      }
    }
    const said = inExpansion.say(p, message);
    if (said === undefined) return;
    problems.push({
      file,
      ...at(p, target),
      message: said,
      code,
      ...(media !== undefined ? { media: shownPath(given.cwd, media) } : {}),
    });
  };

  return { ...given, raw, sources, at, atTemplate, place };
}
