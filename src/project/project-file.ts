// The project file, `reel.yaml`: the folder that holds it is a reel project, and it anchors the
// state, the output folder and the service settings of every command run on manifests under it
// (found by walking up, as git finds `.git`). Paths in it are relative to it. It never holds the
// API key: that comes from the environment alone.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { LineCounter, Pair } from "yaml";
import { isMap, isScalar, isSeq, newLineCounter, parseDocument } from "../yaml-model.js";
import { didYouMean } from "../edit-distance.js";
import { ProjectFileError } from "../errors/usage.js";
import {
  choicesSaid,
  type ExportScope,
  isChoice,
  type SheetChoice,
  templateProblem,
} from "../export-rules.js";
import { PROBLEM_CODES, type Problem } from "../manifest/index.js";
import { isPostgresUrl, secretAdvice, storeUrlSecrets } from "../state/pg/store-url.js";
import {
  BUDGET_NAME_PATTERN,
  EXPORT_FIELDS,
  PROJECT_FIELDS,
  PROJECT_FILE_NAME,
  type ProjectField,
} from "./project-schema.js";

export { PROJECT_FILE_NAME };

/** A project file, read and checked; its paths made absolute. */
export interface Project {
  /** The project file itself (absolute). */
  readonly file: string;
  /** The folder that holds it: its paths are relative to it. */
  readonly root: string;
  readonly statePath: string;
  readonly outDir: string;
  readonly concurrency?: number;
  /** The most videos a manifest, and a run's manifests, may make (src/manifest/expand/video-count.ts). */
  readonly maxVideos?: number;
  readonly baseUrl?: string;
  /** A shared store's postgres:// URL (no secret: see state/pg/store-url.ts). */
  readonly store?: string;
  /** What `reel export` does when its flags do not say. */
  readonly export?: ProjectExport;
  /** The named budget runs and watches of the project spend from (`reel budget set`). */
  readonly budget?: string;
  /** Where notifications are posted (src/notify/): checked as https sources are. */
  readonly notify?: readonly string[];
}

/** `export:`: each setting given (the flags override each). */
export interface ProjectExport {
  /** The name template, and where it is written (`reel.yaml:3:9`) for the messages about it. */
  readonly name?: { readonly template: string; readonly at: string };
  readonly sheet?: SheetChoice;
  readonly status?: ExportScope;
}

/** The project's own defaults, relative to its folder. */
export const PROJECT_DEFAULTS = { state: ".reel/state.db", out: "out" } as const;

/**
 * Reads and checks the project file at `file` (absolute). `shown` is how messages name it (as the
 * user would type it). Throws ProjectFileError listing every problem found.
 */
export function readProject(file: string, shown: string): Project {
  const text = readFileSync(file, "utf8");
  const lineCounter = newLineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const problems: Problem[] = [];
  const at = (offset: number | undefined, message: string, code: Problem["code"]): void => {
    const { line, col } = offset === undefined ? { line: 1, col: 1 } : lineCounter.linePos(offset);
    problems.push({ file: shown, line, col, message, code });
  };
  for (const error of doc.errors) at(error.pos[0], error.message, PROBLEM_CODES.yamlSyntax);
  if (problems.length > 0) throw new ProjectFileError(problems);
  const values: Record<string, unknown> = {};
  if (doc.contents !== null && !isMap(doc.contents)) {
    at(
      doc.contents.range?.[0],
      `${PROJECT_FILE_NAME} must be a mapping of settings (key: value)`,
      "E_INVALID_VALUE",
    );
    throw new ProjectFileError(problems);
  }
  for (const pair of isMap(doc.contents) ? doc.contents.items : []) {
    const key = isScalar(pair.key) ? String(pair.key.value) : "";
    const keyAt = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
    const field = PROJECT_FIELDS.find((f) => f.name === key);
    if (!field) {
      at(keyAt, unknownFieldMessage(key, text), PROBLEM_CODES.unknownField);
      continue;
    }
    const node = pair.value;
    if (field.type === "urls") {
      const read = readUrls(pair, keyAt, at, field);
      if (read !== undefined) values[key] = read;
      continue;
    }
    if (field.type === "export") {
      const read = readExport(pair, keyAt, at, shown, lineCounter);
      if (read !== undefined) values[key] = read;
      continue;
    }
    const value = isScalar(node) ? node.value : node === null ? null : undefined;
    const problem = checkValue(field, value);
    if (problem) at(isScalar(node) ? node.range?.[0] : keyAt, problem, PROBLEM_CODES.invalidValue);
    else if (field.type === "store" && isScalar(node)) {
      const secrets = storeUrlSecrets(String(value));
      for (const secret of secrets) {
        const { what, home } = secretAdvice(secret);
        at(
          placeInScalar(text, node.range, String(value), secret.index),
          `store holds ${what} (${secret.written}), which would be committed with this file: remove it, and ${home}`,
          PROBLEM_CODES.invalidValue,
        );
      }
      if (secrets.length === 0) values[key] = value;
    } else values[key] = value;
  }
  if (values.version === undefined && problems.length === 0) {
    at(0, "missing `version: 1` (the project file's format version)", PROBLEM_CODES.missingField);
  }
  if (problems.length > 0) throw new ProjectFileError(problems);
  const root = dirname(file);
  const path = (value: unknown, fallback: string): string =>
    resolve(root, typeof value === "string" ? value : fallback);
  return {
    file,
    root,
    statePath: path(values.state, PROJECT_DEFAULTS.state),
    outDir: path(values.out, PROJECT_DEFAULTS.out),
    ...(typeof values.concurrency === "number" ? { concurrency: values.concurrency } : {}),
    ...(typeof values.maxVideos === "number" ? { maxVideos: values.maxVideos } : {}),
    ...(typeof values.baseUrl === "string" ? { baseUrl: values.baseUrl } : {}),
    ...(typeof values.store === "string" ? { store: values.store } : {}),
    ...(values.export !== undefined ? { export: values.export as ProjectExport } : {}),
    ...(typeof values.budget === "string" ? { budget: values.budget } : {}),
    ...(Array.isArray(values.notify) ? { notify: values.notify as string[] } : {}),
  };
}

/** `notify:`: one URL, or a list of them, each at its own place when wrong. */
function readUrls(
  pair: Pair,
  keyAt: number | undefined,
  at: (offset: number | undefined, message: string, code: Problem["code"]) => void,
  field: ProjectField,
): string[] | undefined {
  const node = pair.value;
  const items = isSeq(node) ? node.items : [node];
  const urls: string[] = [];
  for (const item of items) {
    const value = isScalar(item) ? item.value : undefined;
    if (typeof value === "string" && /^https?:\/\/\S+$/.test(value)) {
      urls.push(value);
      continue;
    }
    at(
      isScalar(item) ? item.range?.[0] : keyAt,
      `${field.name} takes ${field.expects}, not ${JSON.stringify(value ?? null)}`,
      PROBLEM_CODES.invalidValue,
    );
    return undefined;
  }
  if (urls.length === 0) {
    at(keyAt, `${field.name} takes ${field.expects}, not an empty list`, PROBLEM_CODES.invalidValue);
    return undefined;
  }
  return urls;
}

/**
 * `export:`, checked: a mapping of the settings of EXPORT_FIELDS, each at its own place when wrong;
 * the name template judged as reel export judges one before it copies (export-rules.ts).
 */
function readExport(
  pair: Pair,
  keyAt: number | undefined,
  at: (offset: number | undefined, message: string, code: Problem["code"]) => void,
  shown: string,
  lineCounter: LineCounter,
): ProjectExport | undefined {
  const node = pair.value;
  if (node === null || (isScalar(node) && node.value === null)) return {};
  const known = EXPORT_FIELDS.map((f) => f.name);
  if (!isMap(node)) {
    at(
      isScalar(node) ? node.range?.[0] : keyAt,
      `export takes settings (${known.join(", ")}), e.g. export: { name: "{manifest}/{id}.mp4" }`,
      PROBLEM_CODES.invalidValue,
    );
    return undefined;
  }
  const out: { -readonly [K in keyof ProjectExport]: ProjectExport[K] } = {};
  let bad = false;
  for (const item of node.items) {
    const key = isScalar(item.key) ? String(item.key.value) : "";
    const itemKeyAt = isScalar(item.key) ? item.key.range?.[0] : keyAt;
    const field = EXPORT_FIELDS.find((f) => f.name === key);
    if (!field) {
      const near = didYouMean(key, known);
      at(
        itemKeyAt,
        `unknown export setting '${key}'${near ? `; did you mean ${near}?` : ""} (export takes ${known.join(", ")})`,
        PROBLEM_CODES.unknownField,
      );
      bad = true;
      continue;
    }
    const valueNode = item.value;
    const value = isScalar(valueNode) ? valueNode.value : valueNode === null ? null : undefined;
    const valueAt = isScalar(valueNode) ? valueNode.range?.[0] : itemKeyAt;
    const refuse = (message: string): void => {
      at(valueAt, message, PROBLEM_CODES.invalidValue);
      bad = true;
    };
    if (field.choices) {
      if (!isChoice(field.choices, value)) {
        refuse(`export.${key} takes ${choicesSaid(field.choices)}, not ${JSON.stringify(value ?? null)}`);
        continue;
      }
      if (field.name === "sheet") out.sheet = value as SheetChoice;
      else out.status = value as ExportScope;
      continue;
    }
    if (typeof value !== "string") {
      refuse(
        `export.name takes a name template, e.g. "{manifest}/{id}.mp4", not ${JSON.stringify(value ?? null)}`,
      );
      continue;
    }
    const problem = templateProblem(value);
    if (problem !== undefined) {
      refuse(
        `export.name ${JSON.stringify(value)} ${problem}; write a name relative to the export folder, e.g. "{manifest}/{id}.mp4"`,
      );
      continue;
    }
    const { line, col } = valueAt === undefined ? { line: 1, col: 1 } : lineCounter.linePos(valueAt);
    out.name = { template: value, at: `${shown}:${line}:${col}` };
  }
  return bad ? undefined : out;
}

function checkValue(field: ProjectField, value: unknown): string | undefined {
  const wanted = `${field.name} takes ${field.expects}`;
  switch (field.type) {
    case "version":
      return value === 1 ? undefined : `${wanted}, not ${JSON.stringify(value)}`;
    case "path":
      return typeof value === "string" && value.trim() !== ""
        ? undefined
        : `${wanted}, not ${JSON.stringify(value)}`;
    case "count":
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 1
        ? undefined
        : `${wanted}, not ${JSON.stringify(value)}`;
    case "store":
      // Not the value: it may hold a secret (a connection string that is not a URL).
      return typeof value === "string" && isPostgresUrl(value) ? undefined : wanted;
    case "name":
      return typeof value === "string" && BUDGET_NAME_PATTERN.test(value)
        ? undefined
        : `${wanted}, not ${JSON.stringify(value)}`;
    case "url":
      return typeof value === "string" && /^https?:\/\//.test(value)
        ? undefined
        : `${wanted}, not ${JSON.stringify(value)}`;
  }
}

function unknownFieldMessage(key: string, text: string): string {
  const known = PROJECT_FIELDS.map((f) => f.name).join(", ");
  // A manifest saved under the project file's name: said plainly, since it reads like one.
  if (key === "videos" || (key === "defaults" && /^videos\s*:/m.test(text))) {
    return `this looks like a manifest, but ${PROJECT_FILE_NAME} is reel's project file (state, out, service settings); rename the manifest (e.g. videos.yaml)`;
  }
  if (/^on[-_]?end$/i.test(key)) {
    return `'${key}' is not read from ${PROJECT_FILE_NAME}: a file that may come from someone else must not run commands; give --on-end CMD or REEL_ON_END`;
  }
  if (/key/i.test(key)) {
    return `unknown setting '${key}': the API key is never written in a file; set REEL_API_KEY in the environment (known settings: ${known})`;
  }
  return `unknown setting '${key}' (known settings: ${known})`;
}

/**
 * The offset in the file of character `index` of a scalar's `value`, found in its source (`range`):
 * quotes and escapes aside, the text around it reads the same. The scalar's start where not found.
 */
function placeInScalar(
  text: string,
  range: readonly [number, number, number] | null | undefined,
  value: string,
  index: number,
): number | undefined {
  if (!range) return undefined;
  const source = text.slice(range[0], range[1]);
  const found = source.indexOf(value.slice(index));
  return found === -1 ? range[0] : range[0] + found;
}
