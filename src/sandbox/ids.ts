// One sequence of int64 ids for every resource (tasks, assets, speech, result videos), counted in
// BigInt so that ids above 2^53 stay exact. A single sequence means a task id passed where an asset
// id belongs is "not found" instead of silently naming some other asset.
import type { Id } from "../service-contract/api-types.js";

/** Where `bigIds` starts: above 2^53 (9007199254740992), so its neighbours round to the same double. */
export const BIG_FIRST_ID = 1800000000000000001n;
const SMALL_FIRST_ID = 1001n;

/**
 * `fromClock`: the sequence of a sandbox that keeps nothing across starts begins at a point taken
 * from the clock (1,000 ids per millisecond since 1970), so ids a client got before a restart never
 * name what the new start makes: a resumed run is told "not found", never given another job's video.
 */
export function firstId(bigIds: boolean, fromClock = false): bigint {
  const base = bigIds ? BIG_FIRST_ID : SMALL_FIRST_ID;
  return fromClock ? base + BigInt(Date.now()) * 1000n : base;
}

/**
 * Hands out `first`, `first + 1`, ... `save` receives the next id to hand out before an id leaves
 * the sequence, so a persistent sandbox never hands out the same id twice, even across a kill -9
 * between taking an id and storing the record that uses it.
 */
export function makeIdSequence(first: bigint, save: (next: bigint) => void = () => {}): () => Id {
  let next = first;
  return () => {
    const id = next;
    save(id + 1n);
    next = id + 1n;
    return id.toString();
  };
}
