// What the schema can't say of a manifest: ids unique (also without case), a seed that leaves room
// for its takes, a name (given, or the file's) that can name an output folder. Run even when the
// schema found problems, so that one run reports everything; each reads the value defensively.
import type { FileContext, FileOutcome } from "../load-context.js";
import { nameFromFileName } from "../parse/manifest-file.js";
import { show } from "./messages.js";
import { inherit } from "../plan/normalize.js";
import { PROBLEM_CODES } from "../problem.js";
import { SAFE_NAME_MAX, SAFE_NAME_PATTERN, SEED_MAX } from "./schema.js";
import { isRecord } from "../../values.js";

/** The files reel writes at the top of OUT (see src/report). */
const OUT_FILES = ["results.jsonl", "index.html"];

const videosOf = (raw: unknown): unknown[] => (isRecord(raw) && Array.isArray(raw.videos) ? raw.videos : []);

/** Two videos with one id (or ids that differ only in case): said at the second. */
export function checkIds(ctx: FileContext): void {
  const videos = videosOf(ctx.raw);
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
    const firstLine = ctx.at(["videos", first.index, "id"]).line;
    ctx.place(
      ["videos", i, "id"],
      first.id === id
        ? `video id "${id}" is already used at line ${firstLine}; ids must be unique in a manifest`
        : `video id "${id}" differs from "${first.id}" (line ${firstLine}) only in case; their output files would collide on some file systems`,
      PROBLEM_CODES.duplicateId,
    );
  });
}

/** Takes count their seeds up from the one given: the last must still be a seed. */
export function checkSeeds(ctx: FileContext): void {
  const record = isRecord(ctx.raw) ? ctx.raw : {};
  const videos = videosOf(ctx.raw);
  const defaultsOf = isRecord(record.defaults) ? record.defaults : {};
  videos.forEach((video: unknown, i) => {
    if (!isRecord(video)) return;
    const takes = inherit(video.takes, defaultsOf.takes);
    const seed = inherit(video.seed, defaultsOf.seed);
    if (typeof takes !== "number" || typeof seed !== "number" || seed + takes - 1 <= SEED_MAX) return;
    ctx.place(
      video.seed !== undefined ? ["videos", i, "seed"] : ["defaults", "seed"],
      `seed ${seed} leaves no room for ${takes} takes (seed, seed+1, ...): give at most ${SEED_MAX - takes + 1}`,
      PROBLEM_CODES.invalidValue,
    );
  });
}

const SAFE_NAME = new RegExp(SAFE_NAME_PATTERN);

/** A file's name can name its manifest: the rule a `name:` is held to. */
export function isUsableName(name: string): boolean {
  return SAFE_NAME.test(name) && name.length <= SAFE_NAME_MAX;
}

/** The manifest's name (given, or its file's), or undefined when it has none it can use (said). */
export function manifestName(ctx: FileContext): FileOutcome["name"] {
  const record = isRecord(ctx.raw) ? ctx.raw : {};
  let name: FileOutcome["name"];
  if (typeof record.name === "string") {
    name = { name: record.name, position: () => ctx.at(["name"]) };
  } else if (record.name === undefined) {
    const derived = nameFromFileName(ctx.abs);
    if (isUsableName(derived)) {
      name = { name: derived, position: () => ({ line: 1, col: 1 }) };
    } else {
      ctx.problems.push({
        file: ctx.file,
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
    ctx.problems.push({
      file: ctx.file,
      ...name.position(),
      message: `the manifest name "${name.name}" is taken: reel writes OUT/${name.name.toLowerCase()} itself; ${record.name === undefined ? "add name: to the manifest" : "choose another name"}`,
      code: PROBLEM_CODES.unsafeName,
    });
  }

  return name;
}
