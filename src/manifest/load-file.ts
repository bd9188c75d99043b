// Loading one manifest file: read -> parse -> its rows read and its videos counted against the limit
// -> expanded -> validated -> the checks a schema can't express -> its media resolved -> normalized.
// The parts share a context (load-context.ts); every problem of the file is found in one run.
import path from "node:path";
import { shownPath } from "../user-path.js";
import type { FileChecker } from "./validate/check-files.js";
import { inheritChunks } from "./expand/default-chunks.js";
import { checkIds, checkSeeds, manifestName } from "./validate/file-checks.js";
import { type FileContext, type FileOutcome, makeFileContext } from "./load-context.js";
import type { Position } from "./parse/locate.js";
import { expandMatrices, templatePath } from "./expand/matrix-places.js";
import { valueAt } from "./validate/messages.js";
import { normalizeManifest } from "./plan/normalize.js";
import { overVideoLimit, type VideoTally } from "./expand/over-limit.js";
import { type ParsedYaml, parseYaml } from "./parse/parse-yaml.js";
import type { Problem, Warning } from "./problem.js";
import { readManifestText } from "./parse/read-manifest.js";
import { resolveRefs } from "./validate/resolve-refs.js";
import { readRowsOfVideos, rowOrigins } from "./expand/rows-of-videos.js";
import { checkTexts, notTextMessage } from "./validate/text-checks.js";
import type { LoadOptions } from "./types.js";
import { validateManifestValue } from "./validate/validate.js";

export async function loadFile(
  abs: string,
  options: LoadOptions,
  checker: FileChecker,
  tally: VideoTally,
  rowsFiles: Set<string>,
): Promise<FileOutcome> {
  const file = shownPath(options.cwd, abs);
  const problems: Problem[] = [];
  const fail = (p: Omit<Problem, "file">): FileOutcome => ({ problems: [{ file, ...p }] });

  const read = await readManifestText(abs, options);
  if (!read.ok) return fail(read.problem);
  const { text } = read;

  // 1. Parse.
  const parsedResult = parseYaml(text);
  if (!parsedResult.ok) return { problems: parsedResult.problems.map((p) => ({ file, ...p })), text };
  const parsed: ParsedYaml = parsedResult.parsed;
  // Matrix videos expanded (matrix.ts): everything below reads the expanded videos, and places what
  // it finds in one at its template's line (`at` maps the path back).
  // Defaults' chunks first, into the videos that give none: a matrix's placeholders reach them too.
  const withChunks = inheritChunks(parsed.value);
  // Counted before the expansion allocates anything: the limit holds however many it would make.
  // Rows read first (the same read rule as media): counted with the matrices, and expanded with them.
  const rowsOf = await readRowsOfVideos(
    withChunks.value,
    path.dirname(abs),
    options.cwd,
    checker.allowedDirs,
    rowsFiles,
  );
  const over = overVideoLimit(parsed, withChunks.value, tally, file, rowsOf);
  if (over) return { ...over, text };
  const expansion = expandMatrices(withChunks.value, withChunks.inherited, rowsOf);

  // Texts YAML reads otherwise than they look (`text: Shot #1` is "Shot").
  const texts = checkTexts(parsed, text);
  problems.push(...texts.errors.map((p) => ({ file, ...p })));
  const warnings: Warning[] = texts.warnings.map((w) => ({ file, ...w }));
  const ctx = makeFileContext({
    abs,
    file,
    cwd: options.cwd,
    text,
    parsed,
    written: withChunks.value,
    expansion,
    problems,
    warnings,
  });
  sayExpansionProblems(ctx);

  // 2. Validate against the schema.
  const { raw, place } = ctx;
  const validated = validateManifestValue(raw);
  if (!validated.ok) {
    for (const issue of validated.issues) {
      // Every video a matrix that failed (said above): not "no video" besides.
      if (expansion.problems.length > 0 && issue.path.length === 1 && issue.path[0] === "videos") continue;
      const message =
        (issue.target === "value"
          ? notTextMessage(parsed, text, templatePath(expansion, issue.path), valueAt(raw, issue.path))
          : undefined) ?? issue.message;
      place(issue.path, message, issue.code, issue.target);
    }
  }

  // 3. What the schema can't say.
  checkIds(ctx);
  checkSeeds(ctx);
  const name = manifestName(ctx);
  const refs = await resolveRefs(raw, path.dirname(abs), checker, place);
  const { sources } = ctx;
  if (problems.length > 0 || !validated.ok || !name) return { problems, warnings, name, text, sources };

  // 4. Normalize.
  const templateAt = new Map<number, Position>();
  const manifest = normalizeManifest(validated.manifest, {
    name: name.name,
    file,
    refs,
    positionOfVideo: (i) => {
      const video = validated.manifest.videos[i];
      const own = video && parsed.positionOfObject(video);
      if (own) return own;
      // An expanded video is at its template: looked up once for all of them.
      const template = expansion.origins[i]?.index ?? i;
      let found = templateAt.get(template);
      if (found === undefined) {
        found = ctx.at(["videos", i]);
        templateAt.set(template, found);
      }
      return found;
    },
    variablesOf: (i) => expansion.origins[i]?.values,
    rowOf: rowOrigins(expansion.origins, withChunks.value),
  });
  return { manifest, problems, warnings, name, text };
}

/** The expansion's problems: at the template, or at a rows file's cell. */
function sayExpansionProblems(ctx: FileContext): void {
  for (const p of ctx.expansion.problems) {
    if (p.at === undefined) {
      // A missing rows file is awaited by a watcher as a missing media file is.
      const media = p.media !== undefined ? { media: shownPath(ctx.cwd, p.media) } : {};
      ctx.problems.push({
        file: ctx.file,
        ...ctx.atTemplate(p.path),
        message: p.message,
        code: p.code,
        ...media,
      });
      continue;
    }
    const inFile = shownPath(ctx.cwd, p.at.file);
    ctx.sources.set(inFile, p.at.text);
    ctx.problems.push({ file: inFile, line: p.at.line, col: p.at.col, message: p.message, code: p.code });
  }
}
