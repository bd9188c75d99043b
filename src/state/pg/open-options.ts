// What opening a PostgreSQL store takes (PgStore.open): the service it writes for, who the writer
// is, and what kind of store it opens (writer, reader, reviewer, budget setter).
import type { OutageEvent } from "../job-store.js";
import type { ExclusiveAddress } from "../service-address.js";
import type { LeaseTiming } from "./lease.js";

export interface OpenPgStoreOptions {
  /**
   * The service whose rows the store reads and writes (its canonical form is recorded). Required to
   * write; a reader without one sees every service's jobs in listLatestJobs.
   */
  readonly baseUrl?: string;
  /**
   * The machine whose caches of local files are used.
   * @defaultValue os.hostname()
   */
  readonly host?: string;
  /**
   * The writer's process id, as its runner records it (a test stands in for another machine's).
   * @defaultValue process.pid
   */
  readonly pid?: number;
  /**
   * Where the writer's pid names it (see ../pid-space.ts; a test stands in for another machine's).
   * @defaultValue pidSpace()
   */
  readonly pidSpace?: string;
  /**
   * A reader (`reel status`): the service's row is not created, and journalScope is undefined.
   * @defaultValue false
   */
  readonly readonly?: boolean;
  /**
   * A reader that only looks (the cache of media hashes read before a run locks anything): it does
   * not bring the schema up, so it never waits on another runner's migration; a store mid-migration
   * or of an older schema fails its reads, which its caller takes as "not cached".
   * @defaultValue false
   */
  readonly withoutMigrating?: boolean;
  /**
   * A reviewer (`reel approve`, the review page): writes decisions and retakes, registers no runner
   * (it claims nothing, and is no part of the fleet), creates no service row.
   * @defaultValue false
   */
  readonly review?: boolean;
  /**
   * Setting named budgets (reel budget set): a reviewer that needs no service (budgets are not
   * scoped by one).
   * @defaultValue false
   */
  readonly budgets?: boolean;
  /** @defaultValue Date.now */
  readonly now?: () => number;
  /**
   * A writer's --concurrency, recorded with its runner (0: unknown).
   * @defaultValue 0
   */
  readonly concurrency?: number;
  /**
   * The fleet's timing (tests shorten it; REEL_LEASE_SECONDS sets it, see leaseTimingOf).
   * @defaultValue DEFAULT_LEASE
   */
  readonly lease?: LeaseTiming;
  /**
   * Told while the store opens that it does not answer, and when it answers again (a writer's
   * start-up waits for it; see outage.ts). The engine is told of later outages by fleet.onOutage.
   */
  readonly onOutage?: (event: OutageEvent) => void;
  /** A writer that must be its service's only address in use (see ../service-address.ts). */
  readonly exclusiveAddress?: ExclusiveAddress;
}
