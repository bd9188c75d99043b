// Reading the stream back from the store (`reel events`): every runner's events, oldest first, and
// with `follow` those recorded after, until stopped.
import { setTimeout as sleep } from "node:timers/promises";
import { globToRegExp } from "../manifest/job-filter.js";
import type { EventRecords } from "../state/job-store.js";
import { toStream } from "./stream.js";
import type { StreamEvent } from "./types.js";

/**
 * How often `follow` reads the store again; where the store tells each commit of events
 * (watchEventCommits), the least time between two reads, woken by a commit.
 */
const FOLLOW_POLL_MS = 500;
/** Where the store tells its commits, the read when none was told: a notice lost. */
const FOLLOW_FALLBACK_MS = 5_000;
/**
 * On a shared store, runners' statements commit in another order than their event ids were taken:
 * an id below one seen may still come. Ids are read again for this long after one above them was
 * seen (a statement commits far sooner), and each event is printed once.
 */
const FOLLOW_GRACE_MS = 10_000;
const PAGE = 5_000;

export interface ReadBackOptions {
  /** Epoch ms: events recorded at or after it. */
  readonly since?: number;
  /** Globs: an event's type (job.failed, job.*) or its job (manifest/id, as run --only takes). */
  readonly only?: readonly string[];
  readonly follow?: boolean;
  readonly signal?: AbortSignal;
  /** @defaultValue performance.now */
  readonly now?: () => number;
  /** @defaultValue FOLLOW_POLL_MS */
  readonly pollMs?: number;
}

/** The filter of --only: a glob naming types when it has a dot and no slash, else jobs. */
export function eventFilter(globs: readonly string[]): (event: StreamEvent) => boolean {
  if (globs.length === 0) return () => true;
  const tests = globs.map((glob): ((event: StreamEvent) => boolean) => {
    if (glob.includes(".") && !glob.includes("/")) {
      const source = glob
        .replace(/[\\^$.+()[\]{}|]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".");
      const re = new RegExp(`^${source}$`);
      return (event) => re.test(event.type);
    }
    const re = globToRegExp(glob);
    return (event) => event.job !== undefined && re.test(event.job);
  });
  return (event) => tests.some((test) => test(event));
}

export async function readBack(
  store: Pick<EventRecords, "readEvents" | "watchEventCommits">,
  options: ReadBackOptions,
  write: (events: readonly StreamEvent[]) => void,
): Promise<void> {
  const keep = eventFilter(options.only ?? []);
  const now = options.now ?? (() => performance.now());
  /** Every id at or below it was read, or will never be. */
  let floor = 0;
  /** Ids read above the floor, with when they were first read. */
  const seen = new Map<number, number>();
  /** A commit told since the last read began. */
  let woken = false;
  let waiting: (() => void) | undefined;
  const unwatch = options.follow
    ? await store.watchEventCommits?.(() => {
        woken = true;
        waiting?.();
      })
    : undefined;
  const pollMs = options.pollMs ?? FOLLOW_POLL_MS;
  try {
    for (;;) {
      woken = false;
      const readAt = performance.now();
      for (;;) {
        const rows = await store.readEvents({
          afterId: floor,
          ...(options.since !== undefined && { since: options.since }),
          limit: PAGE,
        });
        const fresh = rows.filter((row) => !seen.has(row.id));
        const at = now();
        for (const row of rows) if (!seen.has(row.id)) seen.set(row.id, at);
        write(toStream(fresh).filter(keep));
        if (!options.follow) {
          if (rows.length < PAGE) return;
          floor = rows[rows.length - 1]!.id;
          seen.clear();
          continue;
        }
        // The floor rises to the highest id seen longer than the grace ago.
        for (const [id, firstSeen] of seen) {
          if (at - firstSeen < FOLLOW_GRACE_MS) continue;
          floor = Math.max(floor, id);
        }
        for (const id of seen.keys()) if (id <= floor) seen.delete(id);
        if (fresh.length < PAGE) break;
      }
      if (options.signal?.aborted) return;
      try {
        // Told of commits: read when one comes (a read at most every pollMs), else on the fallback;
        // not told: every pollMs.
        if (unwatch && !woken) {
          await new Promise<void>((resolve) => {
            const fallback = setTimeout(done, FOLLOW_FALLBACK_MS);
            function done(): void {
              clearTimeout(fallback);
              options.signal?.removeEventListener("abort", done);
              resolve();
            }
            waiting = done;
            options.signal?.addEventListener("abort", done);
          });
          waiting = undefined;
        }
        if (options.signal?.aborted) return;
        const gap = readAt + pollMs - performance.now();
        if (!unwatch || gap > 0) await sleep(unwatch ? gap : pollMs, undefined, { signal: options.signal });
      } catch {
        return; // stopped (Ctrl-C)
      }
    }
  } finally {
    await unwatch?.();
  }
}
