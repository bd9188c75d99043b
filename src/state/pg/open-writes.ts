// Which writes are still open on a shared store. Runners' statements commit in another order than
// they took their event ids, so a follower of every runner's events (src/events/read-back.ts) reads
// an id missing below one it read again, until every write open at that read has ended.
import type { OpenWrites } from "../job-store.js";
import type { PgContext } from "./sql/context.js";
import { openTransactions } from "./sql/events.js";

/** The transactions open at one moment, as the server's snapshot has them. */
class OpenTransactions implements OpenWrites {
  constructor(
    /** Every transaction below it has ended. */
    private readonly oldest: bigint,
    /** Every transaction that began after the moment has an id at or above it. */
    private readonly next: bigint,
  ) {}

  ended(earlier: OpenWrites): boolean {
    return this.oldest >= (earlier as OpenTransactions).next;
  }
}

export async function openWritesOf(c: PgContext): Promise<OpenWrites> {
  const { oldest, next } = await openTransactions(c);
  return new OpenTransactions(oldest, next);
}
