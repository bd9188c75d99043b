// The store interface as a network backend implements it: every method of JobStore returning a
// promise of what it returns. Issue 18 makes JobStore itself asynchronous; once it is, this type is
// JobStore again (Awaited flattens the promise the method already returns), and PgStore implements
// both.
import type { JobStore } from "../job-store.js";

export type AsyncJobStore = {
  [K in keyof JobStore]: JobStore[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : JobStore[K];
};
