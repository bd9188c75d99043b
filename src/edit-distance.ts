// How far a typed word is from a known one, for "did you mean": an unknown option or command on the
// command line, an unknown field or model in a manifest or a price list, a path that names nothing.
// One measure for all, so that a slip is forgiven alike.

/**
 * Optimal string alignment distance, case-insensitive: insertions, deletions, substitutions and
 * swaps of two neighbours each cost 1 ("resolutoin" -> "resolution" is 1, "--jsno" -> "json" is 1);
 * a swap is the commonest slip of the keyboard, and counted as two edits it would hide short words.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    const row = d[i]!;
    const prev = d[i - 1]!;
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      row[j] = best;
    }
  }
  return d[s.length]![t.length]!;
}

/**
 * The candidate nearest to `word`, if it is near enough to be a slip of the keyboard (an edit per
 * three letters, at least one) and the only one that near: between two, a guess would mislead.
 */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tied = false;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tied = false;
    } else if (distance === bestDistance && candidate !== best) tied = true;
  }
  const allowed = Math.max(1, Math.floor(word.length / 3));
  return bestDistance <= allowed && !tied ? best : undefined;
}
