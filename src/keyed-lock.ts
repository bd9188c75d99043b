// A critical section per key: the tasks given one key run one after another, in the order they came;
// other keys do not wait. The store is asynchronous: where the engine reads it and then writes what
// follows from that read (which name a kept video takes, which file holds `<id>.mp4`), another task
// could read the same thing in between. Sections of one key are chained on one promise, and a key's
// entry is dropped once its last section ended, so a long run holds no entry per job.

export interface KeyedLock {
  /** Runs `section` once every section of `key` given before it has ended; its result or error. */
  run<T>(key: string, section: () => Promise<T>): Promise<T>;
}

export function makeKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run(key, section) {
      // A tail never rejects: a section that failed does not hold up the next one (its error is its
      // caller's).
      const result = (tails.get(key) ?? Promise.resolve()).then(section);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
