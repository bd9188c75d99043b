// The state file: one SQLite database that records every step a run takes, so that a run stopped at
// any moment (even by kill -9) resumes without paying twice and without losing a result.
//
// StateStore is the SQLite implementation of JobStore (job-store.ts: what a run needs, and what any
// backend must guarantee), assembled from small parts (../assembled.ts); it keeps only the file's
// own life (open, events, flush, close):
// - records/: the interface's records, one file per concern (jobs, assets and speech, budgets,
//   review, what is kept besides), each method one call into sql/;
// - db/: opening the file (header, ownership, lock, quick check, migrations, the service row);
// - turn.ts: the group commit (the writes of one event-loop turn share one transaction; intents are
//   committed with synchronous=FULL and awaited before the costed call);
// - sql/: one small function per statement, for jobs, job states, assets, speech and the caches.
// The API key is never written here.
import { hostname } from "node:os";
import type { StoredEvent } from "../stored-event.js";
import { canonicalBaseUrl } from "../../service-contract/base-url.js";
import type { StateLock } from "./db/lock.js";
import { type OpenStateOptions, openStateDatabase, realStatePath } from "./db/open.js";
import { lastService } from "./db/services.js";
import { Statements } from "./db/statements.js";
import type { StateFileError } from "../../errors/state.js";
import type { EventQuery, JobStore } from "../job-store.js";
import type { SqlContext } from "./sql/context.js";
import * as events from "./sql/events.js";
import { manifestsWithWork } from "./sql/jobs.js";
import { assembledFrom } from "../assembled.js";
import { assetRecords } from "./records/assets.js";
import { budgetRecords } from "./records/budgets.js";
import { jobRecords } from "./records/jobs.js";
import { keptRecords } from "./records/kept.js";
import { reviewRecords } from "./records/review.js";
import { Turn } from "./turn.js";
import { addOpenStore, removeOpenStore } from "./open-stores.js";

export type { OpenStateOptions } from "./db/open.js";

/** How often a followed store reads its events back (see followOwnEvents). */
const FOLLOW_EVENTS_MS = 100;

/** This process, as its events name it. */
const RUNNER = `${hostname()}:${process.pid}`;

export class StateStore extends assembledFrom() implements JobStore {
  readonly journalScope: { readonly state: string; readonly service: string } | undefined;

  private constructor(
    private readonly c: SqlContext,
    private readonly lock: StateLock | undefined,
    readonly path: string,
    private readonly readonly: boolean,
    baseUrl: string | undefined,
  ) {
    super({
      ...jobRecords(c),
      ...assetRecords(c, new Set()),
      ...budgetRecords(c, new Set()),
      ...reviewRecords(c),
      ...keptRecords(c),
    });
    // A reviewer (no lock) writes no journal: it sends nothing.
    this.journalScope =
      readonly || lock === undefined || baseUrl === undefined
        ? undefined
        : StateStore.journalScopeOf(path, baseUrl);
    if (!readonly) addOpenStore(this);
  }

  static open(path: string, options: OpenStateOptions): StateStore {
    const { db, lock, serviceId } = openStateDatabase(path, options);
    const readonly = options.readonly ?? false;
    const now = options.now ?? Date.now;
    const statements = new Statements(db);
    const turn = new Turn(db, statements, now, path, `${realStatePath(path)}-wal`, !readonly, RUNNER);
    return new StateStore({ db, statements, turn, serviceId, now }, lock, path, readonly, options.baseUrl);
  }

  /** `journalScope` of the state file at `path` (which may not exist yet) for the service `baseUrl`. */
  static journalScopeOf(path: string, baseUrl: string): { readonly state: string; readonly service: string } {
    return { state: realStatePath(path), service: canonicalBaseUrl(baseUrl) };
  }

  /** The base URL of the service whose jobs changed last in the file at `path`, if any. */
  static lastService(path: string): string | undefined {
    const store = StateStore.open(path, { readonly: true });
    try {
      return lastService(store.c.db);
    } finally {
      store.closeSync();
    }
  }

  /**
   * Which of the manifests `names` the state file at `path` has work of (a job sent or a video
   * downloaded, for any service): a state that must not be ignored by a run of those manifests.
   */
  static manifestsWithWork(path: string, names: readonly string[]): string[] {
    const store = StateStore.open(path, { readonly: true });
    try {
      return manifestsWithWork(store.c, names);
    } finally {
      store.closeSync();
    }
  }

  async close(): Promise<void> {
    this.closeSync();
  }

  /** `close`, synchronously: for the static helpers above, which open and close the file in one call. */
  closeSync(): void {
    try {
      if (this.c.db.open) {
        this.flushSync();
        removeOpenStore(this);
        this.c.db.close();
      }
    } finally {
      this.lock?.release();
    }
    if (this.c.turn.writeFailure) throw this.c.turn.writeFailure;
  }

  get writeFailure(): StateFileError | undefined {
    return this.c.turn.writeFailure;
  }

  async flush(): Promise<void> {
    this.flushSync();
  }

  /** `flush`, synchronously: at the process's exit (flushOpenStores), no promise settles any more. */
  flushSync(): void {
    if (this.readonly) return;
    this.c.turn.flush();
  }

  // ---- the event stream (sql/events.ts, src/events) ----

  noteEvent(kind: string, detail: string | null, jobKey: string | null): void {
    if (!this.readonly) this.c.turn.note(kind, detail, jobKey);
  }
  async readEvents(query: EventQuery): Promise<StoredEvent[]> {
    return events.readEvents(this.c, query);
  }
  /**
   * Read back every FOLLOW_EVENTS_MS while followed: one statement per period, whatever the number of
   * commits (a read after each commit cost a tenth of a job's CPU). Only this file's writer writes
   * its events, so they are read by id in the order committed.
   */
  followOwnEvents(listener: (list: readonly StoredEvent[]) => void): () => Promise<void> {
    let last = events.lastEventId(this.c);
    const tell = (): void => {
      if (!this.c.db.open) return;
      for (;;) {
        const list = events.readEvents(this.c, { afterId: last, limit: 10_000 }, RUNNER);
        if (list.length === 0) return;
        last = list[list.length - 1]!.id;
        listener(list);
      }
    };
    const timer = setInterval(tell, FOLLOW_EVENTS_MS);
    timer.unref();
    return async () => {
      clearInterval(timer);
      this.flushSync();
      tell();
    };
  }
  async pruneEvents(before: number): Promise<number> {
    return events.pruneEvents(this.c, before);
  }
}
