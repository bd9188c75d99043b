// A store assembled from its parts. Each backend writes the records of the store's interface (jobs,
// assets and speech, budgets, review, what is kept besides: StoreRecords) as objects, one file per
// concern under its records/, and its store class extends assembledFrom<StoreRecords>(): the
// compiler checks that every method is there, each written once, and the class keeps only the
// store's own life (open, events, flush, close).
import type { StoreRecords } from "./job-store.js";

/** A base class whose instances carry the members of the object given to its constructor as their own. */
export function assembledFrom<T extends object = StoreRecords>(): new (parts: T) => T {
  return class {
    constructor(parts: T) {
      Object.assign(this, parts);
    }
  } as new (parts: T) => T;
}
