// "Did you mean" for a manifest path that names nothing: each missing part of the path (the folder or
// the file name) is replaced by the nearest entry of the folder above it, and the path is offered
// only if what it names exists, so the suggestion can be pasted as it is.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { didYouMean } from "../../edit-distance.js";

/** The existing path nearest to `abs` (absolute, missing), or undefined when none is near enough. */
export function nearestPath(abs: string): string | undefined {
  const parts = abs.split(path.sep).filter((part) => part !== "");
  let current = path.parse(abs).root;
  let changed = false;
  for (const part of parts) {
    const next = path.join(current, part);
    if (existsSync(next)) {
      current = next;
      continue;
    }
    let names: string[];
    try {
      names = readdirSync(current).filter((name) => !name.startsWith("."));
    } catch {
      return undefined;
    }
    const near = didYouMean(part, names);
    if (near === undefined) return undefined;
    current = path.join(current, near);
    changed = true;
  }
  return changed ? current : undefined;
}
