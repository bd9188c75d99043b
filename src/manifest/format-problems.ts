// Problems -> text: one `file:line:col: message` line each (the form editors and terminals turn into
// links), optionally with a short code frame under it. The CLI decides colour and frames (TTY only).
import type { Problem, Warning } from "./problem.js";

/**
 * The text of the file each problem was found in, kept by the loader so that a code frame can be
 * drawn without reading the file again (and without a cwd). Invisible in JSON output.
 */
const PROBLEM_SOURCES = new WeakMap<Problem | Warning, string>();

export function rememberSource(problem: Problem | Warning, text: string): void {
  PROBLEM_SOURCES.set(problem, text);
}

export interface FormatOptions {
  readonly color: boolean;
  readonly codeFrame: boolean;
  /** File text by `problem.file`, for code frames; by default the text the loader kept. */
  readonly sources?: ReadonlyMap<string, string>;
}

const style = (on: boolean, open: number, close: number) => (text: string) =>
  on ? `\u001b[${open}m${text}\u001b[${close}m` : text;

/** `file:line:col` as printed; a problem about a whole file (line 0) prints as `file`. */
export function problemLocation(problem: Problem | Warning): string {
  return problem.line > 0 ? `${problem.file}:${problem.line}:${problem.col}` : problem.file;
}

function codeFrame(text: string, line: number, col: number, color: boolean): string[] {
  const lines = text.split(/\r?\n/);
  const first = Math.max(1, line - 1);
  const last = Math.min(lines.length, line + 1);
  const width = String(last).length;
  const dim = style(color, 2, 22);
  const red = style(color, 31, 39);
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    // Control characters shown as their symbols (one for one, so the caret stays in place): a
    // manifest's escape sequences must not reach the terminal.
    const content = (lines[n - 1] ?? "")
      .replace(/\t/g, " ")
      // eslint-disable-next-line no-control-regex -- control characters are what is looked for
      .replace(/[\x00-\x1f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)))
      .replace(/\x7f/g, "\u2421")
      .replace(/[\x80-\x9f]/g, "\ufffd");
    const shown = content.length > 100 ? `${content.slice(0, 100)}…` : content;
    out.push(`${n === line ? red(">") : " "} ${dim(`${String(n).padStart(width)} |`)} ${shown}`);
    if (n === line)
      out.push(`  ${dim(`${" ".repeat(width)} |`)} ${" ".repeat(Math.max(0, col - 1))}${red("^")}`);
  }
  return out;
}

/**
 * Every problem as `file:line:col: message`, one per line (no trailing newline); warnings as
 * `file:line:col: warning: message`.
 */
export function formatProblems(problems: readonly (Problem | Warning)[], options: FormatOptions): string {
  const bold = style(options.color, 1, 22);
  const yellow = style(options.color, 33, 39);
  const out: string[] = [];
  for (const problem of problems) {
    const label = problem.code.startsWith("W_") ? `${yellow("warning")}: ` : "";
    out.push(`${bold(problemLocation(problem))}: ${label}${problem.message}`);
    if (!options.codeFrame || problem.line <= 0) continue;
    const text = options.sources?.get(problem.file) ?? PROBLEM_SOURCES.get(problem);
    if (text !== undefined) out.push(...codeFrame(text, problem.line, problem.col, options.color), "");
  }
  return out.join("\n");
}

/**
 * Problems and warnings together, file by file (in the order the files first appear) and by
 * position within a file, as formatProblems prints them.
 */
export function mergeFindings(
  problems: readonly Problem[],
  warnings: readonly Warning[],
): (Problem | Warning)[] {
  const all = [...problems, ...warnings];
  const fileOrder = new Map<string, number>();
  for (const item of all) if (!fileOrder.has(item.file)) fileOrder.set(item.file, fileOrder.size);
  return all
    .map((item, index) => ({ item, index }))
    .sort(
      (a, b) =>
        fileOrder.get(a.item.file)! - fileOrder.get(b.item.file)! ||
        a.item.line - b.item.line ||
        a.item.col - b.item.col ||
        a.index - b.index,
    )
    .map(({ item }) => item);
}
