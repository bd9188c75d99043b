// The aliases of a YAML text, bounded: a few lines of anchors and aliases can stand for billions of
// nodes ("billion laughs"), so the tree they expand to is counted before anything walks it.

/** Aliases in js-yaml's output are shared objects: count the tree they stand for, memoised. */
export function withinLimits(root: unknown, maxExpanded: number, maxDepth: number): boolean {
  const sizes = new Map<object, number>();
  const inProgress = new Set<object>();
  const sizeOf = (node: unknown, depth: number): number => {
    if (typeof node !== "object" || node === null) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (inProgress.has(node) || depth > maxDepth) return Number.POSITIVE_INFINITY;
    inProgress.add(node);
    let total = 1;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      total += (Array.isArray(node) ? 0 : 1) + sizeOf(child, depth + 1);
      if (total > maxExpanded) break;
    }
    inProgress.delete(node);
    sizes.set(node, total);
    return total;
  };
  return sizeOf(root, 0) <= maxExpanded;
}
