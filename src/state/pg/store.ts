// The job store on PostgreSQL: what StateStore (../sqlite/store.ts) is over one SQLite file, for
// any number of runners on any machines sharing one database. PgStore keeps the store's own life
// (open, events, close); the rest is assembled from small parts (../assembled.ts): records/ (by
// concern, each write through the outage and, where it needs the lease, fenced), connect.ts,
// migrate.ts, migrations.ts, fleet-store.ts, fleet-news.ts, sql/ (a small function per statement).
//
// What differs from SQLite, and why:
// - No group commit. Every write is one statement (its events row included) that PostgreSQL commits
//   before its promise resolves, with synchronous_commit on: an intent is durable when awaited, and
//   visible to every other runner and reader at once. `flush` has nothing to do.
// - Every intent is a compare-and-set in one statement (an UPDATE or INSERT ... ON CONFLICT whose
//   WHERE is the compare): of two runners racing for one row, the second waits on the first's row
//   lock, then finds the row moved on and claims nothing. The claims are the only guard (no lock
//   file), and enough for one job, speech or upload to be paid once.
// - `writeFailure` is never set: a write either commits whole or fails whole (its promise rejects,
//   nothing of it is left), and no write that resolved can be lost afterwards.
// - The caches of local files are keyed by host, as paths mean nothing on another machine.
// - A fleet: any number of writers (runners) on any machines. A writer registers at open (a row in
//   `runners`: host, pid, service, concurrency; refused there while another address is in use, see
//   ../service-address.ts), beats on a connection of its own (heartbeat.ts; lease.ts says why those
//   times), and records its stop at close. What it claims
//   names it; the fleet's rules (fencing, the account-wide bound, takeover) are in sql/fleet.ts,
//   reached through `fleet` (FleetStore). `reel status` lists the runners (listRunners).
// - A writer's statements run on one connection, in the order issued, as SQLite applies them: the
//   engine relies on that order in two places (watch's forgetting vs a claim; a lost asset).
import { hostname } from "node:os";
import type pg from "pg";
import type { StoredEvent } from "../stored-event.js";
import { canonicalBaseUrl } from "../../service-contract/base-url.js";
import { StateFileError } from "../../errors/state.js";
import { pidSpace } from "../pid-space.js";
import type { EventQuery, FleetStore, FleetView, JobStore, OpenWrites, StoreRecords } from "../job-store.js";
import { openPool, storeOpenError } from "./connect.js";
import { beforeEventWrites, onEventCommits } from "./event-commits.js";
import { listenForEvents, noticeFollowers } from "./event-notices.js";
import { openWritesOf } from "./open-writes.js";
import { redactedUrl } from "./store-url.js";
import { Heartbeat } from "./heartbeat.js";
import { SlotNotices } from "./slot-notices.js";
import { Outage } from "./outage.js";
import { DEFAULT_LEASE, type LeaseTiming, RUNNERS_SHOWN_MS } from "./lease.js";
import { migratePg } from "./migrate.js";
import { PG_MIGRATIONS } from "./migrations.js";
import { assembledFrom } from "../assembled.js";
import { FleetNews } from "./fleet-news.js";
import { fleetStore, type Runner } from "./fleet-store.js";
import { assetRecords } from "./records/assets.js";
import { budgetRecords } from "./records/budgets.js";
import { jobRecords } from "./records/jobs.js";
import { keptRecords } from "./records/kept.js";
import { reviewRecords } from "./records/review.js";
import type { PgSide } from "./records/side.js";
import { type FleetContext, leaseLostError, stopHolding } from "./sql/fleet.js";
import { type PgContext, toNumber } from "./sql/context.js";
import * as events from "./sql/events.js";
import { fleetViews } from "./sql/fleet-view.js";
import * as runners from "./sql/runners.js";

import type { OpenPgStoreOptions } from "./open-options.js";
export type { OpenPgStoreOptions } from "./open-options.js";

/** The least time between two read-backs of a followed writer's events (see followOwnEvents). */
const FOLLOW_GAP_MS = 200;
/** The most events one read-back reads. */
const FOLLOW_PAGE = 10_000;
/** A followed writer's read-back when none of its writes woke one: events written some other way. */
const FOLLOW_FALLBACK_MS = 5_000;

export type { RunnerView, RunnerState } from "./sql/runners.js";

export class PgStore extends assembledFrom() implements JobStore {
  private closed = false;
  /** Notes not yet inserted (see noteEvent), and the insert on its way. */
  private notes: events.Note[] = [];
  private notesSent: Promise<void> = Promise.resolve();
  /** The stream's follower's stop (see followOwnEvents). */
  private stopFollowing: (() => Promise<void>) | undefined;
  readonly writeFailure: StateFileError | undefined = undefined;

  private constructor(
    private readonly c: PgContext,
    /** A writer's context, with its runner (the fleet's statements take it); undefined for a reader. */
    private readonly w: FleetContext | undefined,
    /** Rides out a database that stops answering (a writer only: a reader fails at once). */
    private readonly outage: Outage,
    news: FleetNews,
    /** The store's URL with its password masked: safe in any message. */
    readonly path: string,
    readonly journalScope: { readonly state: string; readonly service: string } | undefined,
    private readonly lease: LeaseTiming,
    /** A writer's runner; undefined for a reader. */
    private readonly runner: Runner | undefined,
    /** The fleet's operations (see FleetStore); undefined for a reader. */
    readonly fleet: FleetStore | undefined,
  ) {
    super(
      assembled({
        c,
        io: (op, landed) => outage.run(op, landed),
        fenced: (work) => news.fenced(work),
        writer: () => {
          if (!w) throw new TypeError("a reader of the store cannot write");
          return w;
        },
        takeOverLost: () => fleet!.takeOverLost(),
        claimed: () => runner!.heartbeat.confirmed(),
      }),
    );
    // A write that records an event is issued after the notes noted before it, on the one
    // connection: a job's job.queued is stored before its claim's submitting.
    if (w) beforeEventWrites(c.pool, () => void this.sendNotes());
  }

  /** A writer's row in `runners`; undefined for a reader. */
  get runnerId(): number | undefined {
    return this.runner?.id;
  }

  /**
   * The last heartbeat's error, until one succeeds: undefined while the beats are recorded (and for
   * a reader). A failed beat is retried at the next; a runner silent past its lease is taken over.
   */
  get heartbeatError(): Error | undefined {
    return this.runner?.heartbeat.lastError;
  }

  /** What each service's fleet does now (see FleetView), for `reel status`; not part of JobStore. */
  fleetViews(): Promise<Map<string, FleetView>> {
    return fleetViews(this.c, this.lease);
  }

  /** The runners `reel status` shows (see RUNNERS_SHOWN_MS), oldest first; not part of JobStore. */
  listRunners(): Promise<runners.RunnerView[]> {
    return runners.listRunners(this.c, this.lease.leaseMs, RUNNERS_SHOWN_MS);
  }

  /**
   * Opens the store at `url` (postgres://...): connects, brings the schema to this reel's version
   * (serialized across runners starting at once), and records the service. Errors name the URL with
   * its password masked.
   */
  static async open(url: string, options: OpenPgStoreOptions): Promise<PgStore> {
    const readonly = options.readonly ?? false;
    const review = !readonly && (options.review === true || options.budgets === true);
    if (!readonly && options.budgets !== true && options.baseUrl === undefined)
      throw new TypeError("baseUrl is required to write");
    const lease = options.lease ?? DEFAULT_LEASE;
    if (!(lease.heartbeatMs > 0 && lease.heartbeatMs < lease.leaseMs)) {
      throw new RangeError(
        `the heartbeat (${lease.heartbeatMs} ms) must be shorter than the lease (${lease.leaseMs} ms)`,
      );
    }
    const host = options.host ?? hostname();
    const path = redactedUrl(url);
    // A writer rides out a store that does not answer from its first statement on, as it does later
    // (a server restarting as the fleet starts); a reader (and a reviewer, one command) fails at
    // once. Every step below is safe to run again after a broken connection (registering, through
    // its `landed`).
    const outage = new Outage(readonly || review ? 0 : lease.outageMs, path);
    const told = options.onOutage && outage.onChange(options.onOutage);
    let pool: pg.Pool | undefined;
    const space = options.pidSpace ?? pidSpace();
    let beatPool: pg.Pool | undefined;
    let runner: Runner | undefined;
    let store: PgStore | undefined;
    const news = new FleetNews();
    try {
      pool = await openPool(url, readonly || review ? 4 : 1, outage);
      const c = { pool };
      if (!(readonly && options.withoutMigrating === true))
        await outage.run(() => migratePg(c.pool, PG_MIGRATIONS));
      let serviceId = -1;
      if (readonly || review) {
        // A reviewer registers no runner and claims no address (see docs/review.md): it pays for
        // nothing, so it neither holds a lease nor keeps another address's runners out.
        if (options.baseUrl !== undefined)
          serviceId = await outage.run(() => serviceIdOf(c.pool, canonicalBaseUrl(options.baseUrl!)));
        if (review && serviceId === 0) {
          throw new StateFileError(`the store ${path} has no jobs of ${options.baseUrl}`);
        }
      } else {
        beatPool = await openPool(url, 1, outage);
        const me: runners.NewRunner = {
          host,
          pid: options.pid ?? process.pid,
          pidSpace: space,
          baseUrl: canonicalBaseUrl(options.baseUrl!),
          concurrency: options.concurrency ?? 0,
          ...(options.exclusiveAddress ? { exclusive: options.exclusiveAddress } : {}),
        };
        const since = await outage.run(() => runners.dbNow(c));
        const registered = await outage.run(
          () => runners.registerRunner(c, me, lease.leaseMs),
          () => runners.registeredSince(c, me, since),
        );
        serviceId = registered.serviceId;
        const id = registered.runnerId;
        const revoked = (): void => {
          const w = store?.w;
          if (!w) return;
          void leaseLostError(w, "It stops taking work.").then((error) => news.leaseLost(error));
        };
        runner = {
          id,
          pidSpace: space,
          pool: beatPool,
          heartbeat: new Heartbeat(beatPool, id, lease.heartbeatMs, revoked),
          notices: new SlotNotices(url, serviceId, id),
        };
        const heartbeat = runner.heartbeat;
        onEventCommits(
          pool,
          noticeFollowers(beatPool, () => heartbeat.followed),
        );
      }
      const ctx: PgContext = {
        pool,
        serviceId,
        host,
        now: options.now ?? Date.now,
        ...(runner && { eventRunnerId: runner.id }),
      };
      const w = runner && { ...ctx, runnerId: runner.id, pidSpace: runner.pidSpace, lease };
      store = new PgStore(
        ctx,
        w,
        outage,
        news,
        path,
        readonly || review || options.baseUrl === undefined
          ? undefined
          : { state: path, service: canonicalBaseUrl(options.baseUrl) },
        lease,
        runner,
        w && fleetStore(w, runner!, news, outage),
      );
      return store;
    } catch (error) {
      await runner?.heartbeat.stop();
      await runner?.notices.close();
      await beatPool?.end().catch(() => {});
      await pool?.end().catch(() => {});
      throw storeOpenError(error, url, false);
    } finally {
      told?.();
    }
  }

  /** Nothing waits: every write was committed before its promise resolved. */
  async flush(): Promise<void> {
    await this.sendNotes();
  }

  // ---- the event stream (sql/events.ts, src/events) ----

  /** A turn's notes go in one statement at its end, or before a write that records an event
   * (beforeEventWrites): on the writer's one connection, in the order they were issued. */
  noteEvent(kind: string, detail: string | null, jobKey: string | null): void {
    if (this.closed || !this.w) return;
    if (this.notes.length === 0) setImmediate(() => void this.sendNotes());
    this.notes.push([this.c.now(), kind, detail, jobKey]);
  }

  private sendNotes(): Promise<void> {
    const notes = this.notes;
    this.notes = [];
    if (notes.length > 0) {
      const runner = `${this.c.host}:${process.pid}`;
      // Issued now: the pool runs queries in the order issued. A note lost to an outage is not
      // worth holding work for (the state changes' own events are recorded with them).
      const sent = events.insertNotes(this.c, notes, this.runner?.id ?? null, runner).catch(() => {});
      this.notesSent = Promise.all([this.notesSent, sent]).then(() => {});
    }
    return this.notesSent;
  }

  readEvents(query: EventQuery): Promise<StoredEvent[]> {
    return events.readEvents(this.c, query);
  }

  /**
   * A writer's statements commit in the order issued (one connection): its events are read back by
   * id, a statement on that connection, when a write of its own committed some (event-commits.ts),
   * at most every FOLLOW_GAP_MS (the writes of that span read back together), and else every
   * FOLLOW_FALLBACK_MS after the last read. A writer that writes nothing reads nothing.
   */
  followOwnEvents(listener: (list: readonly StoredEvent[]) => void): () => Promise<void> {
    const runnerId = this.runner?.id;
    if (runnerId === undefined) throw new TypeError("only a writer has events of its own");
    let last: number | undefined;
    const tell = async (): Promise<void> => {
      last ??= await events.lastEventId(this.c);
      for (;;) {
        const list = await events.readEvents(this.c, { afterId: last, limit: FOLLOW_PAGE }, runnerId);
        if (list.length === 0) return;
        last = list[list.length - 1]!.id;
        listener(list);
        // A page not full was all there was: what commits later wakes the next read.
        if (list.length < FOLLOW_PAGE) return;
      }
    };
    let reading: Promise<void> | undefined;
    let again = false;
    let lastReadAt = -Infinity;
    /** Resolves once a read that began after the call has ended. */
    const read = (): Promise<void> => {
      if (reading) {
        again = true;
        return reading;
      }
      reading = (async () => {
        do {
          again = false;
          lastReadAt = performance.now();
          await tell().catch(() => {});
        } while (again);
        if (!stopped) fallback.refresh();
      })().finally(() => (reading = undefined));
      return reading;
    };
    let soon: NodeJS.Timeout | undefined;
    const wake = (): void => {
      if (soon) return;
      soon = setTimeout(
        () => {
          soon = undefined;
          void read();
        },
        Math.max(0, lastReadAt + FOLLOW_GAP_MS - performance.now()),
      );
      soon.unref();
    };
    let stopped = false;
    const fallback = setTimeout(() => void read(), FOLLOW_FALLBACK_MS);
    fallback.unref();
    const unwatch = onEventCommits(this.c.pool, wake);
    void read();
    const stop = async (): Promise<void> => {
      stopped = true;
      unwatch();
      clearTimeout(soon);
      clearTimeout(fallback);
      this.stopFollowing = undefined;
      await this.sendNotes();
      await read();
    };
    this.stopFollowing = stop;
    return stop;
  }

  watchEventCommits(wake: () => void): Promise<(() => Promise<void>) | undefined> {
    return listenForEvents(this.c.pool, wake);
  }
  openWrites(): Promise<OpenWrites> {
    return openWritesOf(this.c);
  }
  pruneEvents(before: number): Promise<number> {
    return this.outage.run(() => events.pruneEvents(this.c, before));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.stopFollowing?.();
    await this.sendNotes();
    this.closed = true;
    try {
      if (this.runner) {
        await this.runner.heartbeat.stop();
        await this.runner.notices.close();
        // After every write of this writer (one connection, in order): the tasks it followed are
        // let go, for another runner or the next run. Not recorded (the database gone): the runner
        // shows as lost once its lease ends, and is taken over then, which is what it is.
        await stopHolding(this.w!).catch(() => {});
      }
      await this.c.pool.end();
    } finally {
      await this.runner?.pool.end().catch(() => {});
    }
  }
}

/**
 * The row id of the service at `baseUrl` (canonical) for a reader: 0, which matches no row, when the
 * store never saw it. (A writer's is created with its runner: runners.registerRunner.)
 */
async function serviceIdOf(pool: pg.Pool, baseUrl: string): Promise<number> {
  const { rows } = await pool.query<{ id: string }>("SELECT id FROM services WHERE base_url = $1", [baseUrl]);
  return rows[0] ? toNumber(rows[0].id) : 0;
}

/** The store's records (records/), over the ways of its writes. */
function assembled(side: PgSide): StoreRecords {
  return {
    ...jobRecords(side),
    ...assetRecords(side, new Set()),
    ...budgetRecords(side),
    ...reviewRecords(side),
    ...keptRecords(side),
  };
}
