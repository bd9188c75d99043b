// Step 1 of loading: YAML text -> a plain value, with positions. Parsing is defensive: a size
// limit is checked by the caller before reading, duplicate keys and unknown tags are errors, and
// aliases are counted before anything expands them, so a "billion laughs" file is refused in
// milliseconds instead of being walked by the validator.
//
// Two parsers, for speed: js-yaml reads a 10,000-video manifest several times faster than the
// `yaml` package and records where each mapping and list starts (enough for every job's line), so
// it parses first. The `yaml` package keeps a full document with every position and words syntax
// errors well; it runs only when there is something to point at: a file js-yaml refuses (syntax,
// duplicate key, unknown tag, aliases over the limit), or a problem found later (document() is
// built on first use).
import { FAILSAFE_SCHEMA, load, Type, types } from "js-yaml";
import type { Document, LineCounter, Node } from "yaml";
import { isAlias, isMap, isPair, isScalar, isSeq, newLineCounter, parseDocument } from "../../yaml-model.js";
import { PROBLEM_CODES, type ProblemCode } from "../problem.js";
import { explainYamlIssues } from "./yaml-hints.js";
import { withinLimits } from "./yaml-aliases.js";

export interface YamlLimits {
  /** Most values the document may stand for once every alias is expanded. @defaultValue 1,000,000 */
  readonly maxExpandedNodes?: number;
  /** Deepest nesting of mappings and lists. @defaultValue 64 */
  readonly maxDepth?: number;
}

export const DEFAULT_YAML_LIMITS = { maxExpandedNodes: 1_000_000, maxDepth: 64 } as const;

/** A problem found while parsing, before the file name is attached. */
export interface YamlProblem {
  line: number;
  col: number;
  message: string;
  code: ProblemCode;
}

/** The `yaml` package's document, with a position for every node. */
export interface YamlDocument {
  readonly doc: Document.Parsed;
  readonly lineCounter: LineCounter;
}

export interface ParsedYaml {
  /** The document as plain data. Integers outside the safe range are kept exact, as digit strings. */
  readonly value: unknown;
  /** Where a mapping or list of `value` starts, when the fast parser recorded it. */
  positionOfObject(node: object): { line: number; col: number } | undefined;
  /** The full document, parsed on first call. */
  document(): YamlDocument;
}

export type ParseYamlResult = { ok: true; parsed: ParsedYaml } | { ok: false; problems: YamlProblem[] };

/** 1-based line and column of a character offset. */
export function positionOf(lineCounter: LineCounter, offset: number): { line: number; col: number } {
  const { line, col } = lineCounter.linePos(offset);
  return { line: Math.max(line, 1), col: Math.max(col, 1) };
}

export function parseYaml(text: string, limits: YamlLimits = {}): ParseYamlResult {
  const control = findControlCharacter(text);
  if (control) return { ok: false, problems: [control] };
  const fast = parseFast(text, limits);
  if (Array.isArray(fast)) return { ok: false, problems: fast };
  return fast ? { ok: true, parsed: fast } : parseThorough(text, limits);
}

function tooDeepMessage(maxDepth: number): string {
  return `mappings and lists are nested deeper than ${maxDepth} levels; a manifest needs far fewer`;
}

/** What the stack gives when a parser recurses through absurd nesting: the problem is the depth. */
function isStackOverflow(message: string): boolean {
  return /Maximum call stack size exceeded/i.test(message);
}

/**
 * YAML text cannot hold control characters other than tab and line breaks (YAML 1.2, c-printable):
 * one parser refuses them, the other kept a raw NUL inside a quoted string, which would reach the
 * service in a paid request. Refused here, at its place, before either parser runs.
 */
function findControlCharacter(text: string): YamlProblem | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  const found = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/.exec(text);
  if (!found) return undefined;
  const code = found[0].charCodeAt(0);
  const what =
    code === 0
      ? "a NUL character (byte 0)"
      : `a control character (U+${code.toString(16).toUpperCase().padStart(4, "0")})`;
  return {
    ...linePosition(findLineStarts(text), found.index),
    message: `${what}: YAML text cannot contain one, not even inside quotes; remove it`,
    code: PROBLEM_CODES.yamlSyntax,
  };
}

// js-yaml's schema, narrowed to exactly the YAML 1.2 core schema that the `yaml` package uses
// (js-yaml also reads 0b101 and 1_0.5 as numbers), so both parsers give the same values; and
// integers beyond 2^53 stay exact, as digit strings.
const CORE_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const CORE_FLOAT =
  /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const EXACT_INT = new Type("tag:yaml.org,2002:int", {
  kind: "scalar",
  resolve: (data) => CORE_INT.test(data) && types.int.resolve(data),
  construct: (data) => {
    const n = types.int.construct(data);
    if (typeof n !== "number" || Number.isSafeInteger(n)) return n;
    const digits = data.replace(/^\+/, "");
    return /^-?[0-9]+$/.test(digits) ? BigInt(digits).toString() : n;
  },
});
const CORE_FLOAT_TYPE = new Type("tag:yaml.org,2002:float", {
  kind: "scalar",
  resolve: (data) => CORE_FLOAT.test(data) && types.float.resolve(data),
  construct: (data) => types.float.construct(data),
});
const FAST_SCHEMA = FAILSAFE_SCHEMA.extend({
  implicit: [types.null, types.bool, EXACT_INT, CORE_FLOAT_TYPE],
});

/** Where an anchor (`&name`) may be written: without one, no value is an alias. */
const ANCHOR = /(^|[\s[{,:-])&[^\s]/;

/**
 * The value; or the problem when the nesting is too deep (said at once: the other parser would
 * recurse through all of it); or undefined when js-yaml refuses the text or the value breaks a limit.
 */
function parseFast(text: string, limits: YamlLimits): ParsedYaml | YamlProblem[] | undefined {
  const maxExpanded = limits.maxExpandedNodes ?? DEFAULT_YAML_LIMITS.maxExpandedNodes;
  const maxDepth = limits.maxDepth ?? DEFAULT_YAML_LIMITS.maxDepth;
  const opened: number[] = [];
  // Weak: a video let go once its jobs are made (normalize.ts) takes its entry along.
  const starts = new WeakMap<object, number>();
  // Only a video's place is asked for (the third level: the document, videos, a video). Without an
  // anchor each object is closed once, where it is written, so the deeper ones need no entry; with
  // one, a video may be an alias of an object first written deeper, which then gives its place.
  const anchored = ANCHOR.test(text);
  let value: unknown;
  try {
    value = load(text, {
      schema: FAST_SCHEMA,
      maxDepth,
      listener: (event, state) => {
        if (event === "open") {
          opened.push(state.position);
          return;
        }
        const start = opened.pop();
        const result = state.result;
        if (
          start !== undefined &&
          typeof result === "object" &&
          result !== null &&
          (anchored || opened.length <= 2) &&
          !starts.has(result)
        ) {
          starts.set(result, start);
        }
      },
    });
  } catch (error) {
    const { reason, mark } = error as { reason?: string; mark?: { position?: number } };
    if (reason?.startsWith("nesting exceeded maxDepth") && mark?.position !== undefined) {
      const at = linePosition(findLineStarts(text), mark.position);
      return [{ ...at, message: tooDeepMessage(maxDepth), code: PROBLEM_CODES.yamlSyntax }];
    }
    return undefined;
  }
  // Without an anchor there is no alias, and js-yaml has bounded the depth already.
  if (anchored && !withinLimits(value, maxExpanded, maxDepth)) return undefined;

  let lineStarts: number[] | undefined;
  let full: YamlDocument | undefined;
  return {
    value,
    positionOfObject(node) {
      const offset = starts.get(node);
      if (offset === undefined) return undefined;
      lineStarts ??= findLineStarts(text);
      return linePosition(lineStarts, offset);
    },
    document() {
      full ??= parseThoroughDocument(text);
      return full;
    },
  };
}

function findLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

function linePosition(lineStarts: readonly number[], offset: number): { line: number; col: number } {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (lineStarts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low + 1, col: offset - lineStarts[low]! + 1 };
}

const THOROUGH_OPTIONS = {
  prettyErrors: false,
  // Duplicate keys are found by the walk below, with the position of the first one in the message.
  uniqueKeys: false,
  strict: true,
  intAsBigInt: true,
} as const;

function parseThoroughDocument(text: string): YamlDocument {
  const lineCounter = newLineCounter();
  return { doc: parseDocument(text, { ...THOROUGH_OPTIONS, lineCounter }), lineCounter };
}

/** The `yaml` package's parse, with every check and a position for every problem. */
export function parseThorough(text: string, limits: YamlLimits = {}): ParseYamlResult {
  const maxExpanded = limits.maxExpandedNodes ?? DEFAULT_YAML_LIMITS.maxExpandedNodes;
  const maxDepth = limits.maxDepth ?? DEFAULT_YAML_LIMITS.maxDepth;
  const problems: YamlProblem[] = [];
  let document: YamlDocument;
  try {
    document = parseThoroughDocument(text);
  } catch (error) {
    // The parser itself gave up (for instance on absurd nesting): nothing to point at but the start.
    const text = (error as Error).message;
    const message = isStackOverflow(text) ? tooDeepMessage(maxDepth) : `YAML syntax: ${text}`;
    return { ok: false, problems: [{ line: 1, col: 1, message, code: PROBLEM_CODES.yamlSyntax }] };
  }
  const { doc, lineCounter } = document;
  const at = (offset: number) => positionOf(lineCounter, offset);

  // One problem per mistake, in the writer's words (see yaml-hints.ts): a mistake's cascade of
  // errors on the lines after it is not reported.
  const linesWithSyntaxError = new Set<number>();
  // Where the parser ran out of stack: the walk below says the nesting is too deep, where it starts.
  let overflowAt: number | undefined;
  const issues = [...doc.errors, ...doc.warnings].filter((issue) => {
    if (!isStackOverflow(issue.message)) return true;
    overflowAt ??= issue.pos[0];
    return false;
  });
  for (const issue of issues) linesWithSyntaxError.add(at(issue.pos[0]).line);
  for (const explained of explainYamlIssues(doc, text, issues)) {
    problems.push({
      ...at(explained.offset),
      message: explained.message,
      code: explained.unknownTag ? PROBLEM_CODES.unknownTag : PROBLEM_CODES.yamlSyntax,
    });
  }

  // Walk the tree once: duplicate keys, depth, alias cycles, and the size the document would
  // have with every alias expanded (memoised per anchored node, so the walk itself stays linear).
  const expanded = new Map<Node, number>();
  const inProgress = new Set<Node>();
  let biggestAlias: { offset: number; name: string; size: number } | undefined;
  let tooDeep = false;

  const sizeOf = (node: unknown, depth: number): number => {
    if (node === null || node === undefined) return 1;
    if (isScalar(node)) return 1;
    if (isAlias(node)) {
      const target = node.resolve(doc);
      if (!target) {
        // `text: *wow* great`: said once, by the syntax error of its line.
        if (linesWithSyntaxError.has(at(node.range?.[0] ?? 0).line)) return 1;
        problems.push({
          ...at(node.range?.[0] ?? 0),
          message: `alias *${node.source} is not defined: an anchor &${node.source} must come before it in the file`,
          code: PROBLEM_CODES.yamlSyntax,
        });
        return 1;
      }
      if (inProgress.has(target)) {
        problems.push({
          ...at(node.range?.[0] ?? 0),
          message: `alias *${node.source} refers to the collection that contains it`,
          code: PROBLEM_CODES.aliasLimit,
        });
        return Number.POSITIVE_INFINITY;
      }
      const size = sizeOf(target, depth);
      if (!biggestAlias || size > biggestAlias.size) {
        biggestAlias = { offset: node.range?.[0] ?? 0, name: node.source, size };
      }
      return size;
    }
    if (!isMap(node) && !isSeq(node)) return 1;
    const known = expanded.get(node);
    if (known !== undefined) return known;
    if (depth > maxDepth) {
      if (!tooDeep) {
        tooDeep = true;
        problems.push({
          ...at(node.range?.[0] ?? 0),
          message: tooDeepMessage(maxDepth),
          code: PROBLEM_CODES.yamlSyntax,
        });
      }
      return Number.POSITIVE_INFINITY;
    }
    inProgress.add(node);
    let total = 1;
    if (isMap(node)) {
      const seen = new Map<string, number>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = pair.key;
        if (isScalar(key)) {
          const name = String(key.value);
          const first = seen.get(name);
          const offset = key.range?.[0] ?? 0;
          if (first !== undefined) {
            problems.push({
              ...at(offset),
              message: `duplicate key "${name}" (first at line ${at(first).line})`,
              code: PROBLEM_CODES.duplicateKey,
            });
          } else {
            seen.set(name, offset);
          }
        }
        total += sizeOf(key, depth + 1) + sizeOf(pair.value, depth + 1);
        if (total > maxExpanded) break;
      }
    } else {
      for (const item of node.items) {
        total += sizeOf(item, depth + 1);
        if (total > maxExpanded) break;
      }
    }
    inProgress.delete(node);
    expanded.set(node, total);
    return total;
  };

  const total = sizeOf(doc.contents, 0);
  if (overflowAt !== undefined && !tooDeep) {
    problems.push({ ...at(overflowAt), message: tooDeepMessage(maxDepth), code: PROBLEM_CODES.yamlSyntax });
  }
  if (total > maxExpanded && Number.isFinite(total)) {
    problems.push(
      biggestAlias
        ? {
            ...at(biggestAlias.offset),
            message: `this file expands to more than ${maxExpanded} values through its aliases (*${biggestAlias.name} alone stands for ${biggestAlias.size} or more); refused as a resource-exhaustion ("billion laughs") pattern`,
            code: PROBLEM_CODES.aliasLimit,
          }
        : {
            line: 1,
            col: 1,
            message: `this file holds more than ${maxExpanded} values; split it into several manifests`,
            code: PROBLEM_CODES.tooLarge,
          },
    );
  }
  if (problems.length > 0) return { ok: false, problems };

  let value: unknown;
  try {
    value = doc.toJS({
      // The walk above bounded the expansion; yaml's own counter would refuse ordinary reuse.
      maxAliasCount: -1,
      reviver: (_key, v) => {
        if (typeof v !== "bigint") return v;
        return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
      },
    });
  } catch (error) {
    // What the walk above did not foresee: still a problem in this file, not a crash of reel.
    const message = `YAML: ${(error as Error).message}`;
    return { ok: false, problems: [{ line: 1, col: 1, message, code: PROBLEM_CODES.yamlSyntax }] };
  }
  return { ok: true, parsed: { value, positionOfObject: () => undefined, document: () => document } };
}
