// Instance path (as the validator reports it) -> the YAML node -> line:col in the file.
import type { Node } from "yaml";
import { isAlias, isMap, isScalar, isSeq } from "../../yaml-model.js";
import { type ParsedYaml, positionOf } from "./parse-yaml.js";

export type PathSegment = string | number;

/** Splits a JSON Pointer ("/videos/0/chunks/1") into segments; numeric segments stay strings. */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export interface Position {
  line: number;
  col: number;
}

/** What to point at: the value at the path, or the key that names it (for unknown fields). */
export type LocateTarget = "value" | "key";

/**
 * The position of the node at `path`. When the path leads nowhere (a missing field), the deepest
 * node on the way is used, which is the mapping that lacks the field.
 */
export function locate(
  parsed: ParsedYaml,
  path: readonly PathSegment[],
  target: LocateTarget = "value",
): Position {
  const { doc, lineCounter } = parsed.document();
  let node: unknown = doc.contents;
  let offset = offsetOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) break;
      const keyOffset = offsetOf(pair.key);
      const valueOffset = offsetOf(pair.value);
      // `text:` with nothing after it has an empty value: the key is what the user sees.
      const emptyValue = isScalar(pair.value) && pair.value.range?.[0] === pair.value.range?.[1];
      if (last && target === "key") {
        offset = keyOffset ?? offset;
        break;
      }
      offset = (emptyValue ? keyOffset : (valueOffset ?? keyOffset)) ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)];
      if (item === undefined) break;
      offset = offsetOf(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return positionOf(lineCounter, offset);
}

function offsetOf(node: unknown): number | undefined {
  if (node === null || typeof node !== "object") return undefined;
  const range = (node as Node).range;
  return range ? range[0] : undefined;
}
