// The job store on PostgreSQL: what StateStore (../store.ts) is over one SQLite file, for
// any number of runners on any number of machines sharing one database. A facade over small parts:
// connect.ts (the pool, the URL's password masked), migrate.ts and migrations.ts (the schema), and
// sql/ (one small function per statement, for jobs, job states, assets, speech and the caches).
//
// What differs from SQLite, and why:
// - No group commit. Every write is one statement (its events row included) that PostgreSQL commits
//   before its promise resolves, with synchronous_commit on: an intent is durable when awaited, and
//   visible to every other runner and reader at once. `flush` has nothing to do.
// - Every intent is a compare-and-set in one statement (an UPDATE or INSERT ... ON CONFLICT whose
//   WHERE is the compare): of two runners racing for one row, the second waits on the first's row
//   lock, then finds the row moved on and claims nothing. No lock file keeps a second runner out:
//   the claims are the only guard, and they are enough for one job, speech or upload to be paid once.
// - `writeFailure` is never set: a write either commits whole or fails whole (its promise rejects,
//   nothing of it is left), and no write that resolved can be lost afterwards.
// - The caches of local files are keyed by host, as paths mean nothing on another machine.
// - A fleet: any number of writers (runners) on any machines. A writer registers at open (a row in
//   `runners`: host, pid, service, concurrency; refused there while another address is in use, see
//   ../service-address.ts), beats every heartbeat on a connection of its own
//   (heartbeat.ts; lease.ts says why those times), and records its stop at close. What it claims
//   names it; the fleet's rules (fencing, the account-wide bound, takeover) are in sql/fleet.ts,
//   reached through `fleet` (FleetStore). `reel status` lists the runners (listRunners).
// - A writer's statements run on one connection, in the order issued, as SQLite applies them: the
//   engine relies on that order in two places (watch's forgetting vs a claim; a lost asset).
import { hostname } from "node:os";
import pg from "pg";
import type { StoredEvent } from "../stored-event.js";
import { canonicalBaseUrl } from "../../service/base-url.js";
import { LeaseLostError, StateFileError } from "../errors.js";
import { pidSpace } from "../pid-space.js";
import type { ExclusiveAddress } from "../service-address.js";
import type {
  BudgetOwner,
  BudgetSessionRow,
  DecisionRow,
  EventQuery,
  OpenBudgetSession,
  FailKind,
  FileStamp,
  FleetStore,
  FleetView,
  JobHead,
  JobRow,
  JobStore,
  NamedBudget,
  NamedBudgetChange,
  NewDecision,
  RetakeRequest,
  RetakeRow,
  NewJob,
  OutageEvent,
  RestoredJob,
  SpeechCharge,
  SpeechRow,
  SpendTally,
  TakeOver,
  VersionHead,
  VersionRef,
  VideoCharge,
  VideoFacts,
} from "../job-store.js";
import * as budget from "./sql/budget.js";
import * as namedBudgets from "./sql/named-budgets.js";
import { openPool, storeOpenError } from "./connect.js";
import { redactedUrl } from "./store-url.js";
import { Heartbeat } from "./heartbeat.js";
import { notifySlotFree, SlotNotices } from "./slot-notices.js";
import { type Landed, Outage } from "./outage.js";
import { DEFAULT_LEASE, type LeaseTiming, RUNNERS_SHOWN_MS } from "./lease.js";
import { migratePg } from "./migrate.js";
import { namedSpeechKey } from "../ledger-rule.js";
import { PG_MIGRATIONS } from "./migrations.js";
import * as assets from "./sql/assets.js";
import * as caches from "./sql/caches.js";
import { type PgContext, toNumber } from "./sql/context.js";
import * as decisions from "./sql/decisions.js";
import * as events from "./sql/events.js";
import * as retakes from "./sql/retakes.js";
import * as changeMarks from "./sql/change-mark.js";
import * as states from "./sql/job-states.js";
import * as jobs from "./sql/jobs.js";
import * as learned from "./sql/learned.js";
import * as outputs from "./sql/out-manifests.js";
import { restoreJobs } from "./sql/restore.js";
import * as fleet from "./sql/fleet.js";
import { fleetView, fleetViews } from "./sql/fleet-view.js";
import * as runners from "./sql/runners.js";
import * as speech from "./sql/speech.js";

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

/** A writer's runner: its row in `runners`, and the heartbeat that keeps it alive there. */
interface Runner {
  readonly id: number;
  /** Where its pid names it (see ../pid-space.ts). */
  readonly pidSpace: string;
  readonly heartbeat: Heartbeat;
  /** The heartbeat's own connection. */
  readonly pool: pg.Pool;
  /** The slots other runners free, heard on a connection of its own. */
  readonly notices: SlotNotices;
}

/** How often a writer followed reads its events back (see followOwnEvents). */
const POLL_EVENTS_MS = 200;

export type { RunnerView, RunnerState } from "./sql/runners.js";

export class PgStore implements JobStore {
  private readonly c: PgContext;
  /** A writer's context, with its runner (the fleet's statements take it); undefined for a reader. */
  private readonly w: fleet.FleetContext | undefined;
  /** Upload intents this store wrote: one found that it did not write is another process's. */
  private readonly ownUploads = new Set<string>();
  private readonly leaseListeners: ((error: LeaseLostError) => void)[] = [];
  /** Takeovers that found something, told to their listeners (kept until the first: onTakeOver). */
  private readonly takeOvers = { listeners: new Set<(found: TakeOver) => void>(), unsaid: [] as TakeOver[] };
  private leaseLostError: LeaseLostError | undefined;
  private closed = false;
  /** Notes not yet inserted (see noteEvent), and the insert on its way. */
  private notes: events.Note[] = [];
  private notesSent: Promise<void> = Promise.resolve();
  /** The stream's follower's stop (see followOwnEvents). */
  private stopFollowing: (() => Promise<void>) | undefined;
  readonly writeFailure: StateFileError | undefined = undefined;
  /** The fleet's operations (see FleetStore); undefined for a reader. */
  readonly fleet: FleetStore | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    /** Rides out a database that stops answering (a writer only: a reader fails at once). */
    private readonly outage: Outage,
    serviceId: number,
    host: string,
    now: () => number,
    /** The store's URL with its password masked: safe in any message. */
    readonly path: string,
    readonly journalScope: { readonly state: string; readonly service: string } | undefined,
    private readonly lease: LeaseTiming,
    /** A writer's runner; undefined for a reader. */
    private readonly runner: Runner | undefined,
  ) {
    this.c = { pool, serviceId, host, now, ...(runner && { eventRunnerId: runner.id }) };
    this.w = runner && { ...this.c, runnerId: runner.id, pidSpace: runner.pidSpace, lease };
    this.fleet = this.w && this.fleetOf(this.w, runner!);
  }

  /** A takeover is said by whoever listens (the engine's notes), whichever call made it. */
  private tellTakeOver(found: TakeOver): void {
    if (found.lost.length === 0 && found.uncertain === 0 && found.uploads === 0) return;
    if (this.takeOvers.listeners.size === 0) this.takeOvers.unsaid.push(found);
    for (const listener of this.takeOvers.listeners) listener(found);
  }

  private fleetOf(w: fleet.FleetContext, runner: Runner): FleetStore {
    return {
      runnerId: w.runnerId,
      leaseMs: w.lease.leaseMs,
      heartbeatMs: w.lease.heartbeatMs,
      takeOverLost: async (): Promise<TakeOver> => {
        const found = await this.fenced(this.io(() => fleet.takeOverLost(w)));
        this.tellTakeOver(found);
        return found;
      },
      onTakeOver: (listener) => {
        this.takeOvers.listeners.add(listener);
        for (const found of this.takeOvers.unsaid.splice(0)) listener(found);
        return () => this.takeOvers.listeners.delete(listener);
      },
      holdTask: (id) => this.fenced(this.io(() => fleet.holdTask(w, id))),
      heldElsewhere: (ids) => this.io(() => fleet.heldElsewhere(w, ids)),
      // Two beats short of the lease: the other runners judge by the database's clock, and a beat or
      // two may be on its way.
      leaseInDoubt: () =>
        performance.now() - runner.heartbeat.confirmedAt > w.lease.leaseMs - 2 * w.lease.heartbeatMs,
      onLeaseLost: (listener) => {
        if (this.leaseLostError) listener(this.leaseLostError);
        else this.leaseListeners.push(listener);
      },
      onOutage: (listener) => this.outage.onChange(listener),
      // On the writer's connection, after its statements: the others hear of the slot once the
      // write that freed it has committed. Nobody to tell while no other runner was heard.
      slotFree: async () => {
        if (runner.notices.othersHeard)
          await notifySlotFree(this.pool, w.serviceId, w.runnerId).catch(() => {});
      },
      onSlotFree: (listener) => runner.notices.onFree(listener),
      // Not through the outage: a display's reading is skipped while the store does not answer.
      view: () => fleetView(this.c, w.serviceId, w.runnerId, w.lease).catch(() => undefined),
    };
  }

  /** `op`, through the outage (see outage.ts); `landed` for a write that is not idempotent. */
  private io<T>(op: () => Promise<T>, landed?: Landed<T>): Promise<T> {
    return this.outage.run(op, landed);
  }

  /** Tells the listeners, once, that this runner was taken over. */
  private leaseLost(error: LeaseLostError): void {
    if (this.leaseLostError) return;
    this.leaseLostError = error;
    for (const listener of this.leaseListeners.splice(0)) listener(error);
  }

  /** `work`, whose LeaseLostError is also told to the listeners. */
  private async fenced<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      if (error instanceof LeaseLostError) this.leaseLost(error);
      throw error;
    }
  }

  /** The writer's context; a reader has none, and may not write. */
  private writer(): fleet.FleetContext {
    if (!this.w) throw new TypeError("a reader of the store cannot write");
    return this.w;
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
          void fleet.leaseLostError(w, "It stops taking work.").then((error) => store?.leaseLost(error));
        };
        runner = {
          id,
          pidSpace: space,
          pool: beatPool,
          heartbeat: new Heartbeat(beatPool, id, lease.heartbeatMs, revoked),
          notices: new SlotNotices(url, serviceId, id),
        };
      }
      store = new PgStore(
        pool,
        outage,
        serviceId,
        host,
        options.now ?? Date.now,
        path,
        readonly || review || options.baseUrl === undefined
          ? undefined
          : { state: path, service: canonicalBaseUrl(options.baseUrl) },
        lease,
        runner,
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

  /**
   * Notes of one turn of the event loop go in one statement, at its end: on the writer's one
   * connection, after the writes issued before them.
   */
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
      // A note lost to an outage is not worth holding work for: the state changes' own events are
      // recorded with them.
      this.notesSent = this.notesSent.then(() =>
        events.insertNotes(this.c, notes, this.runner?.id ?? null, runner).catch(() => {}),
      );
    }
    return this.notesSent;
  }

  readEvents(query: EventQuery): Promise<StoredEvent[]> {
    return events.readEvents(this.c, query);
  }

  /**
   * A writer's statements commit in the order issued (one connection): its events are read back by
   * id, every POLL_EVENTS_MS while followed, a statement on that connection.
   */
  followOwnEvents(listener: (list: readonly StoredEvent[]) => void): () => Promise<void> {
    const runnerId = this.runner?.id;
    if (runnerId === undefined) throw new TypeError("only a writer has events of its own");
    let last: number | undefined;
    let reading: Promise<void> = Promise.resolve();
    const tell = async (): Promise<void> => {
      last ??= await events.lastEventId(this.c);
      for (;;) {
        const list = await events.readEvents(this.c, { afterId: last, limit: 10_000 }, runnerId);
        if (list.length === 0) return;
        last = list[list.length - 1]!.id;
        listener(list);
      }
    };
    const poll = (): Promise<void> => (reading = reading.then(tell).catch(() => {}));
    void poll();
    const timer = setInterval(() => void poll(), POLL_EVENTS_MS);
    timer.unref();
    const stop = async (): Promise<void> => {
      clearInterval(timer);
      this.stopFollowing = undefined;
      await this.sendNotes();
      await poll();
    };
    this.stopFollowing = stop;
    return stop;
  }

  pruneEvents(before: number): Promise<number> {
    return this.io(() => events.pruneEvents(this.c, before));
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
        await fleet.stopHolding(this.w!).catch(() => {});
      }
      await this.pool.end();
    } finally {
      await this.runner?.pool.end().catch(() => {});
    }
  }

  // ---- jobs (sql/jobs.ts, sql/job-states.ts, sql/restore.ts) ----

  upsertJobs(list: readonly NewJob[]): Promise<JobHead[]> {
    return this.io(() => jobs.upsertJobs(this.c, list));
  }
  restoreJobs(list: readonly RestoredJob[]): Promise<number> {
    return this.io(() => restoreJobs(this.c, list));
  }
  versionHead(key: string, specHash: string): Promise<VersionHead | undefined> {
    return this.io(() => jobs.versionHead(this.c, key, specHash));
  }
  sentAnywhere(list: readonly VersionRef[]): Promise<Set<string>> {
    return this.io(() => jobs.sentAnywhere(this.c, list));
  }
  knownVersions(list: readonly VersionRef[]): Promise<Set<string>> {
    return this.io(() => jobs.knownVersions(this.c, list));
  }
  findJob(key: string, specHash: string): Promise<JobRow | undefined> {
    return this.io(() => jobs.findJob(this.c, key, specHash));
  }
  findJobById(id: number): Promise<JobRow | undefined> {
    return this.io(() => jobs.findJobById(this.c, id));
  }
  getJob(id: number): Promise<JobRow> {
    return this.io(() => jobs.getJob(this.c, id));
  }
  listSentElsewhere(
    list: readonly { readonly key: string; readonly specHash: string }[],
    ignore: readonly string[],
  ): Promise<{ key: string; baseUrl: string }[]> {
    return this.io(() => jobs.listSentElsewhere(this.c, list, ignore));
  }
  downloadedVersions(): Promise<Set<string>> {
    return this.io(() => jobs.downloadedVersions(this.c));
  }
  madeSpecs(): Promise<Map<string, string>> {
    return this.io(() => jobs.madeSpecs(this.c));
  }
  jobsByVersion(): Promise<Map<string, JobRow>> {
    return this.io(() => jobs.jobsByVersion(this.c));
  }
  listJobs(): Promise<JobRow[]> {
    return this.io(() => jobs.listJobs(this.c));
  }
  listManifestJobs(manifest: string): Promise<JobRow[]> {
    return this.io(() => jobs.listManifestJobs(this.c, manifest));
  }
  listLatestJobs(): Promise<(JobRow & { base_url: string })[]> {
    return this.io(() => jobs.listLatestJobs(this.c));
  }
  forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): Promise<number> {
    return this.io(() => jobs.forgetUnsentJobs(this.c, manifest, keep));
  }
  listInFlight(): Promise<JobRow[]> {
    return this.io(() => jobs.listInFlight(this.c));
  }
  listJobsWithFile(key: string, file: string): Promise<JobRow[]> {
    return this.io(() => jobs.listJobsWithFile(this.c, key, file));
  }
  /** The submissions of gone runners only (see fleet.takeOverLost): never a live runner's. */
  async markInterruptedSubmissionsUncertain(): Promise<number> {
    return (await this.fleet!.takeOverLost()).uncertain;
  }
  markSubmitting(id: number, charge?: VideoCharge): Promise<number | null | "full"> {
    const w = this.writer();
    return this.fenced(
      this.io<fleet.Claim>(
        () => fleet.claimJob(w, id, charge),
        () => fleet.claimLanded(w, id),
      ),
    ).then((claim) => {
      if (typeof claim === "number") this.runner!.heartbeat.confirmed();
      return claim;
    });
  }
  withdrawSubmitting(id: number): Promise<void> {
    return this.io(() => states.withdrawSubmitting(this.writer(), id));
  }
  markSubmitted(id: number, taskId: string): Promise<string | undefined> {
    const w = this.writer();
    return this.fenced(
      this.io(
        () => fleet.answerJob(w, id, taskId),
        () => fleet.answerLanded(w, id, taskId),
      ),
    );
  }
  markUncertain(id: number, error: string): Promise<void> {
    return this.io(() => states.markUncertain(this.writer(), id, error));
  }
  markSpeechDoubt(id: number, error: string): Promise<void> {
    return this.io(() => states.markSpeechDoubt(this.writer(), id, error));
  }
  markFailed(id: number, kind: FailKind, error: string): Promise<void> {
    return this.io(() => states.markFailed(this.writer(), id, kind, error));
  }
  markRefused(id: number, error: string): Promise<void> {
    return this.io(() => states.markRefused(this.c, id, error));
  }
  markPending(id: number, why: string): Promise<boolean> {
    // Tried again after a broken connection, a job found pending is this call's doing (or another's
    // at the same moment: either way, pending now).
    return this.io(
      () => states.markPending(this.c, id, why),
      async () => ((await jobs.findJobById(this.c, id))?.state === "pending" ? { value: true } : undefined),
    );
  }
  recordTaskStatus(
    id: number,
    status: string,
    resultUrl: string | undefined,
    reason: string | undefined,
  ): Promise<void> {
    return this.fenced(this.io(() => states.recordTaskStatus(this.writer(), id, status, resultUrl, reason)));
  }
  recordResultUrl(id: number, url: string): Promise<void> {
    return this.io(() => states.recordResultUrl(this.c, id, url));
  }
  markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): Promise<JobRow> {
    return this.io(() => states.markDownloaded(this.c, row, file, outDir, video));
  }
  forgetDownload(row: JobRow): Promise<JobRow> {
    return this.io(() => states.forgetDownload(this.c, row));
  }
  recordJobError(id: number, error: string): Promise<void> {
    return this.io(() => states.recordJobError(this.c, id, error));
  }
  clearJobError(row: JobRow): Promise<JobRow> {
    return this.io(() => states.clearJobError(this.c, row));
  }
  recordVideoStamp(row: JobRow, stamp: string): Promise<JobRow> {
    return this.io(() => states.recordVideoStamp(this.c, row, stamp));
  }

  // ---- assets and speech (sql/assets.ts, sql/speech.ts) ----

  findAsset(sha256: string): Promise<string | undefined> {
    return this.io(() => assets.findAsset(this.c, sha256));
  }
  markUploading(sha256: string): Promise<void> {
    return this.io(() => assets.markUploading(this.writer(), this.ownUploads, sha256));
  }
  forgetUploadIntent(sha256: string): Promise<void> {
    return this.io(() => assets.forgetUploadIntent(this.writer(), sha256));
  }
  /** Those of gone runners only (see fleet.takeOverLost). */
  async takeInterruptedUploads(): Promise<number> {
    return (await this.fleet!.takeOverLost()).uploads;
  }
  recordAsset(sha256: string, assetId: string, size: number): Promise<void> {
    return this.io(() => assets.recordAsset(this.c, sha256, assetId, size));
  }
  madeAsset(assetId: string): Promise<boolean> {
    return this.io(() => assets.madeAsset(this.c, assetId));
  }
  forgetAssetId(assetId: string): Promise<void> {
    return this.io(() => assets.forgetAssetId(this.c, assetId));
  }
  findSpeech(voiceId: string, text: string): Promise<SpeechRow | undefined> {
    return this.io(() => speech.findSpeech(this.c, voiceId, text));
  }
  markSpeechCreating(voiceId: string, text: string, charge?: SpeechCharge): Promise<void> {
    return this.fenced(this.io(() => fleet.startSpeech(this.writer(), voiceId, text, charge)));
  }
  markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): Promise<void> {
    return this.io(() => speech.markSpeechDone(this.c, voiceId, text, assetId, duration));
  }
  markSpeechUncertain(voiceId: string, text: string, error: string): Promise<void> {
    return this.io(() => speech.markSpeechUncertain(this.c, voiceId, text, error));
  }
  clearSpeech(voiceId: string, text: string): Promise<void> {
    return this.io(() => speech.clearSpeech(this.writer(), voiceId, text));
  }
  /** Those of gone runners only (see fleet.takeOverLost). */
  async markInterruptedSpeechUncertain(): Promise<number> {
    return (await this.fleet!.takeOverLost()).speech;
  }

  // ---- the ledger of capped runs (sql/budget.ts) ----

  openBudgetSessions(scope: string): Promise<OpenBudgetSession[]> {
    return this.io(() => budget.openBudgetSessions(this.writer(), scope));
  }
  startBudgetSession(scope: string, owner: BudgetOwner): Promise<BudgetSessionRow> {
    return this.io(() => budget.startBudgetSession(this.writer(), scope, owner));
  }
  takeBudgetSession(session: BudgetSessionRow, owner: BudgetOwner): Promise<boolean> {
    return this.io(() => budget.takeBudgetSession(this.writer(), session, owner));
  }
  budgetSpent(id: number): Promise<SpendTally> {
    return this.io(() => budget.budgetSpent(this.c, id));
  }
  async refundVideo(session: number, jobId: number, attempt: number): Promise<void> {
    await this.io(() => budget.refundVideo(this.c, session, jobId, attempt));
    await this.io(() => namedBudgets.refundNamedVideo(this.c, jobId, attempt));
  }
  async refundSpeech(session: number, voiceId: string, text: string): Promise<void> {
    await this.io(() => budget.refundSpeech(this.c, session, voiceId, text));
    await this.io(() =>
      namedBudgets.refundNamedSpeech(this.c, namedSpeechKey(this.c.serviceId, voiceId, text)),
    );
  }

  // ---- named budgets (sql/named-budgets.ts) ----

  setBudget(name: string, change: NamedBudgetChange): Promise<NamedBudget> {
    return this.io(() => namedBudgets.setBudget(this.c, name, change));
  }
  findBudget(name: string): Promise<NamedBudget | undefined> {
    return this.io(() => namedBudgets.findBudget(this.c, name));
  }
  listBudgets(): Promise<NamedBudget[]> {
    return this.io(() => namedBudgets.listBudgets(this.c));
  }
  endBudgetSession(id: number): Promise<void> {
    return this.io(() => budget.endBudgetSession(this.c, id));
  }

  // ---- reviewers' decisions (sql/decisions.ts) ----

  recordDecisions(list: readonly NewDecision[]): Promise<DecisionRow[]> {
    return this.io(() => decisions.recordDecisions(this.c, list));
  }
  latestDecisions(
    versions?: readonly { readonly key: string; readonly specHash: string }[],
  ): Promise<DecisionRow[]> {
    return this.io(() => decisions.latestDecisions(this.c, versions));
  }
  decisionHistory(key: string, specHash: string): Promise<DecisionRow[]> {
    return this.io(() => decisions.decisionHistory(this.c, key, specHash));
  }

  queueRetake(request: RetakeRequest): Promise<RetakeRow> {
    return this.io(() => retakes.queueRetake(this.c, request));
  }
  withdrawRetake(key: string): Promise<"withdrawn" | "sent" | "none"> {
    return this.io(() => retakes.withdrawRetake(this.c, key));
  }
  listRetakes(manifests?: readonly string[]): Promise<RetakeRow[]> {
    return this.io(() => retakes.listRetakes(this.c, manifests));
  }
  changeMark(): Promise<string> {
    return this.io(() => changeMarks.changeMark(this.c));
  }

  // ---- what the runners learned of the service (sql/learned.ts) ----

  readRunTimes(): Promise<string | undefined> {
    return this.io(() => learned.readRunTimes(this.c));
  }
  writeRunTimes(data: string): Promise<void> {
    return this.io(() => learned.writeRunTimes(this.c, data));
  }

  // ---- the manifests of each output folder (sql/out-manifests.ts) ----

  recordOutManifest(outDir: string, manifest: string): Promise<void> {
    return this.io(() => outputs.recordOutManifest(this.c, outDir, manifest));
  }
  outManifests(outDir: string): Promise<string[]> {
    return this.io(() => outputs.outManifests(this.c, outDir));
  }
  forgetOutManifest(outDir: string, manifest: string): Promise<boolean> {
    return this.io(() => outputs.forgetOutManifest(this.c, outDir, manifest));
  }

  // ---- local caches of this host (sql/caches.ts) ----

  findFileHash(path: string, stamp: FileStamp): Promise<string | undefined> {
    return this.io(() => caches.findFileHash(this.c, path, stamp));
  }
  recordFileHash(path: string, stamp: FileStamp, sha256: string): Promise<void> {
    return this.io(() => caches.recordFileHash(this.c, path, stamp, sha256));
  }
  findRemote(url: string): Promise<{ sha256: string; path: string; size: number } | undefined> {
    return this.io(() => caches.findRemote(this.c, url));
  }
  recordRemote(url: string, sha256: string, path: string, size: number): Promise<void> {
    return this.io(() => caches.recordRemote(this.c, url, sha256, path, size));
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
