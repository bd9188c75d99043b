// Export's file work is many small system calls: a few at a time keep libuv's thread pool busy
// (sequential, 10,000 videos wait on one call at a time).
export const FILE_CONCURRENCY = 16;

/** `work` of each item, at most `limit` at once, results in the items' order. */
export async function inParallel<T, R>(
  items: readonly T[],
  work: (item: T) => Promise<R>,
  limit = FILE_CONCURRENCY,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
