// `reel validate PATH...`: parse and check manifests; every problem as `file:line:col: message`.
// Problems go to stderr (with a code frame on a TTY), the verdict to stdout; `--json` prints
// `{ok, problems, summary}` on stdout instead.
import { UsageError } from "../errors/usage.js";
import {
  checkAllowRead,
  formatProblems,
  type LoadResult,
  loadManifests,
  mergeFindings,
  type Problem,
  type Warning,
} from "../manifest/index.js";
import { MAX_VIDEOS_OPTION, maxVideosOfRoots, maxVideosUsage } from "./max-videos.js";
import { projectRootsOf } from "./workplace.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { plural } from "../plural.js";

const USAGE = `Usage: reel validate PATH... [--allow-read DIR]... [--max-videos N] [--json]

PATH: manifest files, or folders searched for *.yaml / *.yml.

Options:
  --allow-read DIR   let manifests read files under DIR too (repeatable); by default they may only
                     read files under the current folder
${maxVideosUsage(21)}
  --json             print {ok, problems, warnings, summary} on stdout

Warnings (file:line:col: warning: ...) point at what YAML reads otherwise than it looks, such as a
comment after a text; they do not make a manifest invalid.

Exit codes: 0 valid (with or without warnings), 2 invalid.`;

export function stringList(values: ParsedArgs["values"], name: string): string[] {
  const v = values[name];
  if (typeof v === "string") return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

export interface LoadSummary {
  manifests: number;
  videos: number;
  seconds: number;
}

export function summarize(loaded: Pick<LoadResult, "manifests" | "problems">): LoadSummary {
  const jobs = loaded.manifests.flatMap((m) => m.jobs);
  return {
    manifests: loaded.manifests.length,
    videos: jobs.length,
    seconds: jobs.reduce((sum, j) => sum + j.seconds, 0),
  };
}

/** "3 manifests, 42 videos, 310 s of video" */
export function summaryText(summary: LoadSummary): string {
  return `${plural(summary.manifests, "manifest")}, ${plural(summary.videos, "video")}, ${summary.seconds} s of video`;
}

/** "1 problem in 1 file", "3 problems in 2 files": how every command counts a load's problems. */
export function problemsText(problems: readonly Pick<Problem, "file">[]): string {
  const files = new Set(problems.map((p) => p.file)).size;
  return `${plural(problems.length, "problem")} in ${plural(files, "file")}`;
}

/**
 * Loads manifests for a command that takes PATH..., --allow-read and --max-videos. `projectRoots`:
 * the folders of the projects the manifests are in, which they may read from too. `maxVideos`: the
 * limit (max-videos.ts).
 */
export async function loadFromArgs(
  args: ParsedArgs,
  io: CliIO,
  command: string,
  projectRoots: readonly string[],
  maxVideos: number,
): Promise<LoadResult> {
  if (args.positionals.length === 0)
    throw new UsageError(`give at least one manifest file or folder: reel ${command} PATH...`);
  const allowRead = stringList(args.values, "allow-read");
  await checkAllowRead(allowRead, io.cwd);
  return loadManifests(args.positionals, {
    cwd: io.cwd,
    allowRead: [...allowRead, ...projectRoots],
    maxVideos,
  });
}

/**
 * Writes problems and warnings to stderr, with colour and code frames on a TTY (NO_COLOR turns
 * colour off), then a count. Nothing when there is neither.
 */
export function writeProblems(
  problems: readonly Problem[],
  io: CliIO,
  command: string,
  warnings: readonly Warning[] = [],
): void {
  if (problems.length === 0 && warnings.length === 0) return;
  const tty = io.stderr.isTTY === true;
  const color = tty && io.env.NO_COLOR === undefined;
  io.stderr.write(`${formatProblems(mergeFindings(problems, warnings), { color, codeFrame: tty })}\n`);
  const counts = [
    ...(problems.length > 0 ? [problemsText(problems)] : []),
    ...(warnings.length > 0 ? [plural(warnings.length, "warning")] : []),
  ];
  io.stderr.write(`reel ${command}: ${counts.join(", ")}\n`);
}

export const validateCommand: Command = {
  name: "validate",
  usage: USAGE,
  options: {
    "allow-read": { type: "string", multiple: true },
    ...MAX_VIDEOS_OPTION,
    json: { type: "boolean" },
  },
  async run(args: ParsedArgs, io: CliIO): Promise<number> {
    const roots = projectRootsOf(args.positionals, io.cwd);
    const loaded = await loadFromArgs(args, io, "validate", roots, maxVideosOfRoots(args, io, roots));
    const ok = loaded.problems.length === 0;
    const summary = summarize(loaded);
    if (args.values.json === true) {
      io.stdout.write(
        `${JSON.stringify({ ok, problems: loaded.problems, warnings: loaded.warnings, summary })}\n`,
      );
    } else {
      writeProblems(loaded.problems, io, "validate", loaded.warnings);
      if (ok) io.stdout.write(`${summaryText(summary)}: ok\n`);
    }
    return ok ? EXIT.ok : EXIT.invalidInput;
  },
};
