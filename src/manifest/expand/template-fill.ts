// The template of an expanded video, read once (compileTemplate) and filled for each combination or
// row (fill): placeholders replaced by their values, the rest shared, each missing value said once.
import type { PathSegment } from "../parse/locate.js";
import { type Combination, PLACEHOLDER, type Scalar } from "./matrix-axes.js";
import type { ProblemCode } from "../problem.js";
import { isRecord } from "../../values.js";

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

/** `value` read as a template (see matrix.ts); `fresh`: a new object even with no placeholder. */
export function compileTemplate(value: unknown, path: readonly PathSegment[], fresh = false): Compiled {
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
export interface Filling {
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

/** `compiled` with every placeholder replaced by its value (see matrix.ts). */
export function fill(compiled: Compiled, filling: Filling): unknown {
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
