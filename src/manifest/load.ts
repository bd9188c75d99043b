// Loading manifests: files and folders -> parse -> validate -> checks a schema can't express ->
// normalize. Problems are returned as data, every problem of every file at once; a file with
// problems yields no manifest, the others still load.
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import path from "node:path";
import { UsageError } from "../errors.js";
import type { Id } from "../service/api-types.js";
import { readId } from "../service/check-request.js";
import { shownPath } from "../user-path.js";
import { FileChecker, hashFileStreaming, type MediaUse } from "./check-files.js";
import { rememberSource } from "./format-problems.js";
import { locate, type PathSegment, type Position } from "./locate.js";
import { inheritChunks } from "./default-chunks.js";
import { ExpansionProblems, expandMatrices, templatePath } from "./matrix-places.js";
import type { RowsOfVideo, VideoOrigin } from "./matrix.js";
import { rowFieldTemplates } from "./rows.js";
import { readRowsFile, type RowsOptions, type RowsTable } from "./rows-file.js";
import { isManifestFile, nameFromFileName } from "./manifest-file.js";
import { nearestPath } from "./near-path.js";
import { show } from "./messages.js";
import { type ChunkRefField, inherit, normalizeManifest, ResolvedRefs } from "./normalize.js";
import { type ParsedYaml, parseYaml } from "./parse-yaml.js";
import { compareProblems, PROBLEM_CODES, type Problem, type Warning } from "./problem.js";
import { MEDIA_STRING_PATTERN, SAFE_NAME_MAX, SAFE_NAME_PATTERN, SEED_MAX } from "./schema.js";
import { checkTexts, notTextMessage } from "./text-checks.js";
import type { AssetRef, LoadOptions, LoadResult, NormalizedManifest, RowOrigin } from "./types.js";
import { valueAt } from "./messages.js";
import { validateManifestValue } from "./validate.js";
import { countVideos, manifestOverLimit, passedAt, runOverLimit } from "./video-count.js";
import { DEFAULTS } from "../defaults.js";
import { INT64_MAX, isRecord } from "../values.js";

export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

const SAFE_NAME = new RegExp(SAFE_NAME_PATTERN);
/** The files reel writes at the top of OUT (see src/report). */
const OUT_FILES = ["results.jsonl", "index.html"];
const MEDIA_STRING = new RegExp(MEDIA_STRING_PATTERN, "u");

async function collectFolder(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => !e.name.startsWith("."))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of names) {
    const full = path.join(dir, entry.name);
    // Symlinked folders are not followed: a link back up the tree would never end.
    if (entry.isDirectory()) await collectFolder(full, out);
    else if ((entry.isFile() || entry.isSymbolicLink()) && isManifestFile(entry.name)) out.push(full);
  }
}

/** The manifest files named by `paths` (files as given, folders searched for *.yaml / *.yml), in order. */
async function expandPaths(paths: readonly string[], cwd: string, problems: Problem[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  for (const given of paths) {
    const abs = path.resolve(cwd, given);
    let found: string[];
    try {
      const info = await stat(abs);
      found = [];
      if (info.isDirectory()) {
        await collectFolder(abs, found);
        if (found.length === 0) {
          // Most likely a mistyped folder: running "nothing" would also empty OUT/results.jsonl.
          problems.push({
            file: given,
            line: 0,
            col: 0,
            message: "no manifest (*.yaml, *.yml) in this folder or below",
            code: PROBLEM_CODES.notFound,
          });
        }
      } else found.push(abs);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const near = code === "ENOENT" ? nearestPath(abs) : undefined;
      problems.push({
        file: given,
        line: 0,
        col: 0,
        message:
          code === "ENOENT"
            ? `no such file or folder${near ? `; did you mean ${shownPath(cwd, near)}?` : ""}`
            : `cannot read: ${(error as Error).message}`,
        code: code === "ENOENT" ? PROBLEM_CODES.notFound : PROBLEM_CODES.readFailed,
      });
      continue;
    }
    for (const file of found) {
      if (!seen.has(file)) {
        seen.add(file);
        files.push(file);
      }
    }
  }
  return dropLinksToListedFiles(files);
}

/**
 * A link to a manifest that is listed too (`alias.yaml -> good.yaml` in the same folder) is the same
 * file: read once, as itself. Read twice, a manifest without `name:` would become two manifests
 * named after the two files, and its videos would be paid for twice.
 */
async function dropLinksToListedFiles(files: string[]): Promise<string[]> {
  const real = await Promise.all(files.map((file) => realpath(file).catch(() => file)));
  const listed = new Set(files);
  const kept = new Set<string>();
  return files.filter((file, i) => {
    const target = real[i]!;
    if (target !== file && listed.has(target)) return false; // the file itself is listed
    if (kept.has(target)) return false; // two links to one file outside the list: the first
    kept.add(target);
    return true;
  });
}

/** Digits the schema accepts but the service cannot: ids are int64. */
function isOversizedId(value: unknown): boolean {
  return typeof value === "string" && /^\d+$/.test(value) && BigInt(value) > INT64_MAX;
}

/**
 * UTF-16 or UTF-32 (as some Windows editors and PowerShell's `>` save text), told by the byte order
 * mark, or without one by the zero bytes of ASCII text: one in two (UTF-16), three in four (UTF-32).
 */
export function wideEncoding(bytes: Uint8Array): string | undefined {
  const [a, b, c, d] = bytes;
  if (a === 0xff && b === 0xfe && c === 0 && d === 0) return "UTF-32";
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return "UTF-32";
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) return "UTF-16";
  const head = bytes.subarray(0, 512 - (Math.min(bytes.length, 512) % 4));
  if (head.length < 4) return undefined;
  const zeros = [0, 0, 0, 0];
  head.forEach((byte, i) => {
    if (byte === 0) zeros[i % 4]!++;
  });
  const quarter = head.length / 4;
  const mostly = (n: number) => n >= 0.9 * quarter;
  const few = (n: number) => n <= 0.1 * quarter;
  const [z0, z1, z2, z3] = zeros as [number, number, number, number];
  if (
    (mostly(z1) && mostly(z2) && mostly(z3) && few(z0)) ||
    (mostly(z0) && mostly(z1) && mostly(z2) && few(z3))
  )
    return "UTF-32";
  if ((mostly(z1) && mostly(z3) && few(z0) && few(z2)) || (mostly(z0) && mostly(z2) && few(z1) && few(z3)))
    return "UTF-16";
  return undefined;
}

type Place = (
  p: readonly PathSegment[],
  message: string,
  code: Problem["code"],
  target?: "value" | "key",
  media?: string,
) => void;

/**
 * Every source, audio and speech of `raw` (found defensively), resolved; what is wrong with one is
 * said through `place`. Each distinct media path is checked once: a campaign's 100,000 videos
 * sharing a face cost one look-up, not 100,000 waits for it.
 */
async function resolveRefs(
  raw: unknown,
  dir: string,
  checker: FileChecker,
  place: Place,
): Promise<ResolvedRefs> {
  const refs = new ResolvedRefs();
  /** The media paths to check, by field and path: where each is used, as (video, chunk) pairs. */
  const media = new Map<string, { field: "source" | "audio"; value: string; uses: number[] }>();
  const DEFAULTS_VIDEO = -1;
  const NO_CHUNK = -1;
  const pathOf = (video: number, chunk: number, field: string): PathSegment[] =>
    video === DEFAULTS_VIDEO
      ? ["defaults", field]
      : chunk === NO_CHUNK
        ? ["videos", video, field]
        : ["videos", video, "chunks", chunk, field];
  // A campaign's voices are a few ids among many rows: each read once, one text for each.
  const voiceIds = new Map<unknown, Id | undefined>();
  const idOf = (value: unknown): Id | undefined => {
    if (typeof value !== "number" && typeof value !== "string") return readId(value);
    if (!voiceIds.has(value)) voiceIds.set(value, readId(value));
    return voiceIds.get(value);
  };
  const visit = (
    video: number,
    chunk: number,
    field: "source" | "audio" | "speech",
    value: unknown,
  ): void => {
    if (value === undefined) return;
    if (field === "speech") {
      if (!isRecord(value)) return;
      const voiceId = idOf(value.voice);
      if (isOversizedId(value.voice)) {
        place(
          [...pathOf(video, chunk, field), "voice"],
          `voice ${show(value.voice)} is larger than any id (${INT64_MAX})`,
          PROBLEM_CODES.invalidValue,
        );
      }
      if (voiceId !== undefined && typeof value.text === "string")
        refs.setChunk(video, chunk, field, { kind: "speech", voiceId, text: value.text });
      return;
    }
    if (isRecord(value)) {
      const id = readId(value.asset);
      if (id !== undefined) setRef(video, chunk, field, { kind: "asset", id });
      else if (isOversizedId(value.asset)) {
        place(
          [...pathOf(video, chunk, field), "asset"],
          `asset ${show(value.asset)} is larger than any id (${INT64_MAX})`,
          PROBLEM_CODES.invalidValue,
        );
      }
      return;
    }
    // Strings the schema refuses (empty, http://) have their problem already.
    if (typeof value !== "string" || value === "" || !MEDIA_STRING.test(value)) return;
    const key = `${field}\n${value}`;
    let entry = media.get(key);
    if (entry === undefined) {
      entry = { field, value, uses: [] };
      media.set(key, entry);
    }
    entry.uses.push(video, chunk);
  };
  const setRef = (video: number, chunk: number, field: "source" | "audio", ref: AssetRef): void => {
    if (chunk !== NO_CHUNK) refs.setChunk(video, chunk, field as ChunkRefField, ref);
    else refs.setSource(video === DEFAULTS_VIDEO ? "defaults" : video, ref);
  };

  if (isRecord(raw)) {
    if (isRecord(raw.defaults)) visit(DEFAULTS_VIDEO, NO_CHUNK, "source", raw.defaults.source);
    if (Array.isArray(raw.videos))
      raw.videos.forEach((video: unknown, i) => {
        if (!isRecord(video)) return;
        visit(i, NO_CHUNK, "source", video.source);
        if (!Array.isArray(video.chunks)) return;
        video.chunks.forEach((chunk: unknown, j) => {
          if (!isRecord(chunk)) return;
          visit(i, j, "audio", chunk.audio);
          visit(i, j, "speech", chunk.speech);
        });
      });
  }

  const entries = [...media.values()];
  const checked = await Promise.all(
    entries.map((entry) => {
      const use: MediaUse = entry.field === "source" ? "image" : "audio";
      return checker.check(entry.value, dir, entry.field, use);
    }),
  );
  entries.forEach((entry, k) => {
    const result = checked[k]!;
    for (let u = 0; u < entry.uses.length; u += 2) {
      const video = entry.uses[u]!;
      const chunk = entry.uses[u + 1]!;
      if (result.ok) setRef(video, chunk, entry.field, result.ref);
      else place(pathOf(video, chunk, entry.field), result.message, result.code, "value", result.file);
    }
  });
  return refs;
}

interface FileOutcome {
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

/** A video's `rows:` as written: the file and its options, or what is wrong with it. */
function rowsField(value: unknown): { file: string; options: RowsOptions } | string {
  const usage =
    'rows takes a CSV file relative to the manifest, e.g. rows: ./leads.csv, or rows: { file: ./leads.csv, delimiter: ";" }';
  if (typeof value === "string" && value !== "") return { file: value, options: {} };
  if (!isRecord(value) || typeof value.file !== "string" || value.file === "") return usage;
  const extra = Object.keys(value).filter((key) => key !== "file" && key !== "delimiter");
  if (extra.length > 0) return `rows takes file and delimiter, not ${extra.join(", ")}`;
  const { delimiter } = value;
  if (delimiter === undefined) return { file: value.file, options: {} };
  if (typeof delimiter !== "string" || [...delimiter].length !== 1 || /["\r\n]/.test(delimiter))
    return `rows delimiter is one character, e.g. ";" or "\\t" (not a quote or a line break)`;
  return { file: value.file, options: { delimiter } };
}

/**
 * The rows of every video of `value` that has `rows:`, read (rows-file.ts), by video index. Each CSV
 * there, readable under the read rule, is added to `files` (a watcher follows them).
 */
async function readRowsOfVideos(
  value: unknown,
  dir: string,
  cwd: string,
  allowed: readonly string[],
  files: Set<string>,
): Promise<Map<number, RowsOfVideo>> {
  const out = new Map<number, RowsOfVideo>();
  const videos = isRecord(value) && Array.isArray(value.videos) ? value.videos : [];
  await Promise.all(
    videos.map(async (video: unknown, index) => {
      if (!isRecord(video) || !("rows" in video)) return;
      const at: PathSegment[] = ["videos", index, "rows"];
      const field = rowsField(video.rows);
      if (typeof field === "string") {
        out.set(index, { path: at, message: field, code: PROBLEM_CODES.invalidValue });
        return;
      }
      const read = await readRowsFile(field.file, dir, cwd, allowed, field.options);
      if (read.ok) files.add(read.table.file);
      else if (read.code !== PROBLEM_CODES.pathOutside && read.code !== PROBLEM_CODES.fileMissing)
        files.add(read.at?.file ?? path.resolve(dir, field.file));
      if (read.ok) out.set(index, read.table);
      else
        out.set(index, {
          path: at,
          message: read.message,
          code: read.code,
          ...(read.at ? { at: read.at } : {}),
          ...(read.code === PROBLEM_CODES.fileMissing ? { media: path.resolve(dir, field.file) } : {}),
        });
    }),
  );
  return out;
}

/** The placeholders `{name}` of a text. */
function placeholdersIn(text: string): string[] {
  return [...text.matchAll(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].flatMap((m) =>
    m[1] === undefined ? [] : [m[1]],
  );
}

/** The cell of `table`'s row a field written `template` took its value from, if one column. */
function cellOf(template: unknown, table: RowsTable, row: RowsTable["rows"][number]) {
  if (typeof template !== "string") return undefined;
  const columns = placeholdersIn(template).filter((name) => table.header.includes(name));
  if (new Set(columns).size !== 1) return undefined;
  const column = table.header.indexOf(columns[0]!);
  return { column: columns[0]!, ...table.placeOf(row, column) };
}

/**
 * Each expanded video's CSV row, for plan --explain: one object per row (its jobs share it), the
 * field templates read once per video as written.
 */
function rowOrigins(
  origins: readonly VideoOrigin[],
  written: unknown,
): (index: number) => RowOrigin | undefined {
  const videos = isRecord(written) && Array.isArray(written.videos) ? written.videos : [];
  const templates = new Map<number, Map<string, string>>();
  // A row's videos (its matrix's combinations) are next to each other: the last row's is enough.
  let last: { row: RowsTable["rows"][number]; made: RowOrigin } | undefined;
  return (index) => {
    const origin = origins[index];
    if (!origin?.row) return undefined;
    const { table, row } = origin.row;
    if (last?.row === row) return last.made;
    let fields = templates.get(origin.index);
    if (fields === undefined) {
      fields = rowFieldTemplates(videos[origin.index], table.header);
      templates.set(origin.index, fields);
    }
    last = { row, made: { file: table.file, line: row.line, header: table.header, templates: fields } };
    return last.made;
  };
}

/** The videos of one load's manifests, counted against the limit (video-count.ts). */
interface VideoTally {
  readonly limit: number;
  /** Of the manifests let through. */
  admitted: number;
  /** Of every manifest counted, let through or not: the run's total, as said. */
  all: number;
}

/**
 * Counts the videos of `value` (parsed, defaults' chunks in) against the limit, before anything is
 * expanded: what a file over it returns instead of its manifest, or undefined when it fits.
 */
function overVideoLimit(
  parsed: ParsedYaml,
  value: unknown,
  tally: VideoTally,
  file: string,
  rowsOf: ReadonlyMap<number, RowsOfVideo>,
): FileOutcome | undefined {
  const counts = countVideos(value, rowsOf);
  const total = counts.reduce((sum, n) => sum + n, 0);
  tally.all += total;
  // Where the fast parser saw the video start: locate() would build the whole document, which for
  // a large file costs more than the count saves.
  const top = isRecord(parsed.value) ? parsed.value : {};
  const videoAt = (i: number) => {
    const video: unknown = Array.isArray(top.videos) ? top.videos[i] : undefined;
    return (isRecord(video) ? parsed.positionOfObject(video) : undefined) ?? locate(parsed, ["videos", i]);
  };
  // Still named, so that `status` shows the jobs it ran under a higher limit.
  const name =
    typeof top.name === "string"
      ? { name: { name: top.name, position: () => locate(parsed, ["name"]) } }
      : {};
  const passed = passedAt(counts, tally.limit);
  if (passed !== undefined) {
    const message = manifestOverLimit(total, tally.limit);
    return { problems: [{ file, ...videoAt(passed), message, code: PROBLEM_CODES.tooManyVideos }], ...name };
  }
  const passedInRun = passedAt(counts, tally.limit - tally.admitted);
  if (passedInRun !== undefined)
    return { problems: [], overRun: { count: total, ...videoAt(passedInRun) }, ...name };
  tally.admitted += total;
  return undefined;
}

async function loadFile(
  abs: string,
  options: LoadOptions,
  checker: FileChecker,
  tally: VideoTally,
  rowsFiles: Set<string>,
): Promise<FileOutcome> {
  const file = shownPath(options.cwd, abs);
  const problems: Problem[] = [];
  const fail = (p: Omit<Problem, "file">): FileOutcome => ({ problems: [{ file, ...p }] });

  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  let text: string;
  try {
    const info = await stat(abs);
    if (!info.isFile()) {
      // A named pipe would block the read for ever (and a thread of libuv's pool with it).
      return fail({
        line: 0,
        col: 0,
        message: "not a regular file (a named pipe, socket or device?); a manifest must be a file",
        code: PROBLEM_CODES.readFailed,
      });
    }
    if (info.size > maxBytes) {
      return fail({
        line: 1,
        col: 1,
        message: `the file is ${info.size} bytes; a manifest may have at most ${maxBytes} bytes`,
        code: PROBLEM_CODES.tooLarge,
      });
    }
    const bytes = await readFile(abs);
    const wide = wideEncoding(bytes);
    if (wide) {
      // Read as UTF-8, every other byte is a NUL: said for what it is, before any other message.
      return fail({
        line: 1,
        col: 1,
        message: `this file is ${wide} text, not UTF-8; save it as UTF-8`,
        code: PROBLEM_CODES.readFailed,
      });
    }
    // Without the byte order mark some editors write: it would count as a column of line 1. A lone
    // CR (old Mac line ends) is a line break to YAML but not to the position counter, which would
    // place every problem on line 1; one character for one keeps every offset.
    text = bytes
      .toString("utf8")
      .replace(/^\uFEFF/, "")
      .replace(/\r(?!\n)/g, "\n");
    if (!isUtf8(bytes)) {
      // Read as UTF-8 anyway, a Latin-1 "é" would reach the service as "\uFFFD": a paid video of
      // the wrong text.
      const bad = text.indexOf("\uFFFD");
      const before = text.slice(0, Math.max(0, bad));
      const line = before.split("\n").length;
      return fail({
        line,
        col: bad - (before.lastIndexOf("\n") + 1) + 1,
        message: "the file is not UTF-8 text (Latin-1 or another legacy encoding?); save it as UTF-8",
        code: PROBLEM_CODES.readFailed,
      });
    }
  } catch (error) {
    return fail({
      line: 0,
      col: 0,
      message: `cannot read: ${(error as Error).message}`,
      code: PROBLEM_CODES.readFailed,
    });
  }

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
  const sources = new Map<string, string>();
  const raw = expansion.value;
  const atTemplate = (p: readonly PathSegment[], target: "value" | "key" = "value") =>
    locate(parsed, p, target);
  const at = (p: readonly PathSegment[], target: "value" | "key" = "value") =>
    atTemplate(templatePath(expansion, p), target);

  // Texts YAML reads otherwise than they look (`text: Shot #1` is "Shot").
  const texts = checkTexts(parsed, text);
  problems.push(...texts.errors.map((p) => ({ file, ...p })));
  const warnings: Warning[] = texts.warnings.map((w) => ({ file, ...w }));

  for (const p of expansion.problems) {
    if (p.at === undefined) {
      // A missing rows file is awaited by a watcher as a missing media file is.
      const media = p.media !== undefined ? { media: shownPath(options.cwd, p.media) } : {};
      problems.push({ file, ...atTemplate(p.path), message: p.message, code: p.code, ...media });
      continue;
    }
    const inFile = shownPath(options.cwd, p.at.file);
    sources.set(inFile, p.at.text);
    problems.push({
      file: inFile,
      line: p.at.line,
      col: p.at.col,
      message: p.message,
      code: p.code,
    });
  }

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
      const cell = cellOf(valueAt(withChunks.value, templatePath(expansion, p)), table, row);
      if (cell) {
        const inFile = shownPath(options.cwd, table.file);
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
      ...(media !== undefined ? { media: shownPath(options.cwd, media) } : {}),
    });
  };

  // 2. Validate against the schema.
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

  // 3. What the schema can't say. Run even when the schema found problems, so that one run
  // reports everything; each check reads the raw value defensively.
  const record = isRecord(raw) ? raw : {};
  const videos = Array.isArray(record.videos) ? record.videos : [];
  // Positions are looked up only for duplicates: a lookup may build the full YAML document.
  const ids = new Map<string, number>(); // an id without case -> the first video with it
  videos.forEach((video: unknown, i) => {
    const id = isRecord(video) ? video.id : undefined;
    if (typeof id !== "string") return;
    const lower = id.toLowerCase();
    const index = ids.get(lower);
    if (index === undefined) {
      ids.set(lower, i);
      return;
    }
    const first = { id: (videos[index] as { id: string }).id, index };
    const firstLine = at(["videos", first.index, "id"]).line;
    place(
      ["videos", i, "id"],
      first.id === id
        ? `video id "${id}" is already used at line ${firstLine}; ids must be unique in a manifest`
        : `video id "${id}" differs from "${first.id}" (line ${firstLine}) only in case; their output files would collide on some file systems`,
      PROBLEM_CODES.duplicateId,
    );
  });

  // Takes count their seeds up from the one given: the last must still be a seed.
  const defaultsOf = isRecord(record.defaults) ? record.defaults : {};
  videos.forEach((video: unknown, i) => {
    if (!isRecord(video)) return;
    const takes = inherit(video.takes, defaultsOf.takes);
    const seed = inherit(video.seed, defaultsOf.seed);
    if (typeof takes !== "number" || typeof seed !== "number" || seed + takes - 1 <= SEED_MAX) return;
    place(
      video.seed !== undefined ? ["videos", i, "seed"] : ["defaults", "seed"],
      `seed ${seed} leaves no room for ${takes} takes (seed, seed+1, ...): give at most ${SEED_MAX - takes + 1}`,
      PROBLEM_CODES.invalidValue,
    );
  });

  let name: FileOutcome["name"];
  if (typeof record.name === "string") {
    name = { name: record.name, position: () => at(["name"]) };
  } else if (record.name === undefined) {
    const derived = nameFromFileName(abs);
    if (SAFE_NAME.test(derived) && derived.length <= SAFE_NAME_MAX) {
      name = { name: derived, position: () => ({ line: 1, col: 1 }) };
    } else {
      problems.push({
        file,
        line: 1,
        col: 1,
        message: `this manifest has no name and its file name ${show(derived)} can't be one (letters, digits, '.', '_', '-'); add name: to the manifest`,
        code: PROBLEM_CODES.unsafeName,
      });
    }
  }

  // OUT/<name>/ sits beside reel's own files at the top of OUT: a manifest must not take their place
  // (compared without case: on macOS and Windows, Index.html is index.html).
  if (name && OUT_FILES.includes(name.name.toLowerCase())) {
    problems.push({
      file,
      ...name.position(),
      message: `the manifest name "${name.name}" is taken: reel writes OUT/${name.name.toLowerCase()} itself; ${record.name === undefined ? "add name: to the manifest" : "choose another name"}`,
      code: PROBLEM_CODES.unsafeName,
    });
  }

  const refs = await resolveRefs(raw, path.dirname(abs), checker, place);

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
        found = at(["videos", i]);
        templateAt.set(template, found);
      }
      return found;
    },
    variablesOf: (i) => expansion.origins[i]?.values,
    rowOf: rowOrigins(expansion.origins, withChunks.value),
  });
  return { manifest, problems, warnings, name, text };
}

async function isFolder(abs: string): Promise<boolean> {
  try {
    return (await stat(abs)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Refuses `--allow-read` values that name no folder: a mistake in the command, not in a manifest,
 * so it is said before anything is read (exit 2).
 */
export async function checkAllowRead(dirs: readonly string[], cwd: string): Promise<void> {
  for (const dir of dirs) {
    const abs = path.resolve(cwd, dir);
    if (!(await isFolder(abs))) {
      const exists = await stat(abs).then(
        () => true,
        () => false,
      );
      throw new UsageError(
        `--allow-read ${dir}: ${exists ? "is a file, not a folder; give the folder that holds it" : "no such folder"} (it names a folder manifests may read files from)`,
      );
    }
  }
}

/**
 * Loads manifests from files and folders (folders: every `*.yaml` / `*.yml` below, sorted, hidden
 * entries skipped). Returns the valid manifests and every problem found, sorted by file and position.
 */
export async function loadManifests(paths: string[], options: LoadOptions): Promise<LoadResult> {
  const cwd = path.resolve(options.cwd);
  const opts: LoadOptions = { ...options, cwd };
  const problems: Problem[] = [];
  const warnings: Warning[] = [];

  // The CLI refuses an --allow-read that names no folder (checkAllowRead); one removed since (a long
  // watch) allows nothing, so files under it are reported as outside.
  const allowed = [cwd];
  for (const dir of options.allowRead ?? []) {
    const abs = path.resolve(cwd, dir);
    if (await isFolder(abs)) allowed.push(abs);
  }

  const files = await expandPaths(paths, cwd, problems);
  const checker = new FileChecker({ cwd, allowed, hashFile: options.hashFile ?? hashFileStreaming });
  const outcomes: FileOutcome[] = [];
  const tally: VideoTally = { limit: options.maxVideos ?? DEFAULTS.maxVideos, admitted: 0, all: 0 };
  const rowsFiles = new Set<string>();
  for (const file of files) outcomes.push(await loadFile(file, opts, checker, tally, rowsFiles));

  // Manifest names name output folders: unique across the run, whatever the case.
  const names = new Map<string, string>();
  const manifests: NormalizedManifest[] = [];
  outcomes.forEach((outcome, i) => {
    const file = shownPath(cwd, files[i]!);
    const fileProblems = [...outcome.problems];
    if (outcome.overRun) {
      const { count, line, col } = outcome.overRun;
      const message = runOverLimit(tally.all, count, tally.limit);
      fileProblems.push({ file, line, col, message, code: PROBLEM_CODES.tooManyVideos });
    }
    if (outcome.name) {
      const key = outcome.name.name.toLowerCase();
      const first = names.get(key);
      if (first === undefined) names.set(key, file);
      else {
        fileProblems.push({
          file,
          ...outcome.name.position(),
          message: `manifest name "${outcome.name.name}" is already used by ${first}; names must be unique in a run (they name the output folders)`,
          code: PROBLEM_CODES.duplicateName,
        });
      }
    }
    // The manifest's own problems first, then those placed in its rows files.
    fileProblems.sort(
      (a, b) =>
        Number(a.file !== file) - Number(b.file !== file) ||
        (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
        compareProblems(a, b),
    );
    for (const p of fileProblems) {
      const source = p.file === file ? outcome.text : outcome.sources?.get(p.file);
      if (source !== undefined) rememberSource(p, source);
    }
    problems.push(...fileProblems);
    const fileWarnings = [...(outcome.warnings ?? [])].sort(compareProblems);
    if (outcome.text !== undefined) for (const w of fileWarnings) rememberSource(w, outcome.text);
    warnings.push(...fileWarnings);
    if (outcome.manifest && fileProblems.length === 0) manifests.push(outcome.manifest);
  });

  const found = outcomes.flatMap((outcome) => (outcome.name ? [outcome.name.name] : []));
  return { manifests, problems, warnings, names: found, rowsFiles: [...rowsFiles] };
}
