// Reading the stream back from the store (`reel events`): every runner's events, oldest first, and
// with `follow` those recorded after, until stopped.
import { setTimeout as sleep } from "node:timers/promises";
import { globToRegExp } from "../manifest/job-filter.js";
import type { EventRecords, OpenWrites } from "../state/job-store.js";
import type { StoredEvent } from "../state/stored-event.js";
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
 * an id missing below one read may still come. It is read again until every write open at the read
 * that found it missing has ended (openWrites), and for at least this long (a statement takes its
 * first id a moment before the server counts it open).
 */
const GAP_GRACE_MS = 10_000;
/**
 * A missing id given up even while a write open at its read is still open: a transaction held open
 * for so long is not a runner's (theirs take milliseconds) but another program's on the server, and
 * must not keep every read looking.
 */
const GAP_GIVE_UP_MS = 10 * 60_000;
/**
 * At the first read, the ids below the first one read that are looked for: more are older events
 * (deleted, or before --since), not writes still open.
 */
const FIRST_GAP_IDS = 5_000;
const PAGE = 5_000;

/** Ids missing below one read: from, to (both included), when found missing, and the writes open then. */
interface Gap {
  readonly from: number;
  readonly to: number;
  readonly found: number;
  open: OpenWrites | undefined;
}

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
  store: Pick<EventRecords, "readEvents" | "watchEventCommits" | "openWrites">,
  options: ReadBackOptions,
  write: (events: readonly StreamEvent[]) => void,
): Promise<void> {
  const keep = eventFilter(options.only ?? []);
  const now = options.now ?? (() => performance.now());
  const since = options.since !== undefined ? { since: options.since } : {};
  /** The highest id read: every id above it is still to be read. */
  let top = 0;
  /** Ids below `top` not read, looked for again at each read until they settle (follow only). */
  let gaps: Gap[] = [];
  /** Ids read within the gaps, so that each event is written once. */
  const readInGaps = new Set<number>();
  const tell = (rows: readonly StoredEvent[]): void => write(toStream(rows).filter(keep));
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
      if (gaps.length > 0) {
        const within = gaps.map((gap) => [gap.from, gap.to] as const);
        for (let afterId = 0; ;) {
          const rows = await store.readEvents({ afterId, within, ...since, limit: PAGE });
          tell(rows.filter((row) => !readInGaps.has(row.id)));
          for (const row of rows) readInGaps.add(row.id);
          if (rows.length < PAGE) break;
          afterId = rows[rows.length - 1]!.id;
        }
      }
      const at = now();
      for (;;) {
        const rows = await store.readEvents({ afterId: top, ...since, limit: PAGE });
        if (options.follow) {
          let below = top === 0 && rows.length > 0 ? Math.max(0, rows[0]!.id - FIRST_GAP_IDS - 1) : top;
          for (const row of rows) {
            if (row.id > below + 1)
              gaps.push({ from: below + 1, to: row.id - 1, found: at, open: undefined });
            below = row.id;
          }
        }
        if (rows.length > 0) top = rows[rows.length - 1]!.id;
        tell(rows);
        if (rows.length < PAGE) break;
      }
      if (!options.follow) return;
      // Taken after the reads: every write open at them is open here, or has ended.
      const open = gaps.length > 0 ? await store.openWrites?.() : undefined;
      gaps = gaps.filter((gap) => {
        gap.open ??= open;
        const settled =
          (at - gap.found >= GAP_GRACE_MS && (!open || open.ended(gap.open!))) ||
          at - gap.found >= GAP_GIVE_UP_MS;
        if (settled) for (const id of readInGaps) if (id >= gap.from && id <= gap.to) readInGaps.delete(id);
        return !settled;
      });
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
