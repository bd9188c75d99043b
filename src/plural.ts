// Counts as a person says them, in every message reel prints: "1 job", "2 jobs", never "job(s)".

/** `count` and the word for it: `word` for one, `many` (default: word + "s") otherwise. */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}

/** `one` for a count of one, `many` otherwise: the verb or pronoun that goes with a count. */
export function agree(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}
