// The state file: one SQLite database that records every step a run takes, so that a run stopped at
// any moment (even by kill -9) resumes without paying twice and without losing a result.
//
// StateStore is the SQLite implementation of JobStore (job-store.ts: what a run needs, and what any
// backend must guarantee), a facade over small parts:
// - db/: opening the file (header, ownership, lock, quick check, migrations, the service row);
// - turn.ts: the group commit (the writes of one event-loop turn share one transaction; intents are
//   committed with synchronous=FULL and awaited before the costed call);
// - sql/: one small function per statement, for jobs, job states, assets, speech and the caches.
// The API key is never written here.
import { hostname } from "node:os";
import type Database from "better-sqlite3";
import type { StoredEvent } from "../stored-event.js";
import { canonicalBaseUrl } from "../../service/base-url.js";
import type { StateLock } from "./db/lock.js";
import { type OpenStateOptions, openStateDatabase, realStatePath } from "./db/open.js";
import { lastService } from "./db/services.js";
import { Statements } from "./db/statements.js";
import type { StateFileError } from "../errors.js";
import type {
  BudgetOwner,
  BudgetSessionRow,
  DecisionRow,
  EventQuery,
  FailKind,
  OpenBudgetSession,
  FileStamp,
  JobHead,
  JobRow,
  JobStore,
  NamedBudget,
  NamedBudgetChange,
  NewDecision,
  RetakeRequest,
  RetakeRow,
  NewJob,
  RestoredJob,
  SpeechCharge,
  SpeechRow,
  SpendTally,
  VersionHead,
  VersionRef,
  VideoCharge,
  VideoFacts,
} from "../job-store.js";
import * as budget from "./sql/budget.js";
import * as namedBudgets from "./sql/named-budgets.js";
import * as assets from "./sql/assets.js";
import * as caches from "./sql/caches.js";
import type { SqlContext } from "./sql/context.js";
import * as decisions from "./sql/decisions.js";
import * as events from "./sql/events.js";
import * as retakes from "./sql/retakes.js";
import * as changeMarks from "./sql/change-mark.js";
import * as states from "./sql/job-states.js";
import * as jobs from "./sql/jobs.js";
import * as learned from "./sql/learned.js";
import * as outputs from "./sql/out-manifests.js";
import { restoreJobs } from "./sql/restore.js";
import * as speech from "./sql/speech.js";
import { Turn } from "./turn.js";
import { addOpenStore, removeOpenStore } from "./open-stores.js";

export type { OpenStateOptions } from "./db/open.js";

/** How often a followed store reads its events back (see followOwnEvents). */
const FOLLOW_EVENTS_MS = 100;

export class StateStore implements JobStore {
  private readonly c: SqlContext;
  private readonly turn: Turn;
  /** Upload intents this store wrote: one found that it did not write is another process's. */
  private readonly ownUploads = new Set<string>();
  /** Budget sessions this store started or resumed: the others' processes are gone (the lock). */
  private readonly ownSessions = new Set<number>();
  /** This process, as its events name it. */
  private readonly runner = `${hostname()}:${process.pid}`;
  readonly journalScope: { readonly state: string; readonly service: string } | undefined;

  private constructor(
    private readonly db: Database.Database,
    serviceId: number,
    private readonly lock: StateLock | undefined,
    now: () => number,
    readonly path: string,
    private readonly readonly: boolean,
    baseUrl: string | undefined,
  ) {
    const statements = new Statements(db);
    this.turn = new Turn(db, statements, now, path, `${realStatePath(path)}-wal`, !readonly, this.runner);
    this.c = { db, statements, turn: this.turn, serviceId, now };
    // A reviewer (no lock) writes no journal: it sends nothing.
    this.journalScope =
      readonly || lock === undefined || baseUrl === undefined
        ? undefined
        : StateStore.journalScopeOf(path, baseUrl);
    if (!readonly) addOpenStore(this);
  }

  static open(path: string, options: OpenStateOptions): StateStore {
    const { db, lock, serviceId } = openStateDatabase(path, options);
    return new StateStore(
      db,
      serviceId,
      lock,
      options.now ?? Date.now,
      path,
      options.readonly ?? false,
      options.baseUrl,
    );
  }

  /** `journalScope` of the state file at `path` (which may not exist yet) for the service `baseUrl`. */
  static journalScopeOf(path: string, baseUrl: string): { readonly state: string; readonly service: string } {
    return { state: realStatePath(path), service: canonicalBaseUrl(baseUrl) };
  }

  /** The base URL of the service whose jobs changed last in the file at `path`, if any. */
  static lastService(path: string): string | undefined {
    const store = StateStore.open(path, { readonly: true });
    try {
      return lastService(store.db);
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
      return jobs.manifestsWithWork(store.c, names);
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
      if (this.db.open) {
        this.flushSync();
        removeOpenStore(this);
        this.db.close();
      }
    } finally {
      this.lock?.release();
    }
    if (this.turn.writeFailure) throw this.turn.writeFailure;
  }

  get writeFailure(): StateFileError | undefined {
    return this.turn.writeFailure;
  }

  async flush(): Promise<void> {
    this.flushSync();
  }

  /** `flush`, synchronously: at the process's exit (flushOpenStores), no promise settles any more. */
  flushSync(): void {
    if (this.readonly) return;
    this.turn.flush();
  }

  // ---- the event stream (sql/events.ts, src/events) ----

  noteEvent(kind: string, detail: string | null, jobKey: string | null): void {
    if (!this.readonly) this.turn.note(kind, detail, jobKey);
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
      if (!this.db.open) return;
      for (;;) {
        const list = events.readEvents(this.c, { afterId: last, limit: 10_000 }, this.runner);
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

  // ---- jobs (sql/jobs.ts, sql/job-states.ts, sql/restore.ts) ----

  async upsertJobs(list: readonly NewJob[]): Promise<JobHead[]> {
    return jobs.upsertJobs(this.c, list);
  }
  async restoreJobs(list: readonly RestoredJob[]): Promise<number> {
    return restoreJobs(this.c, list);
  }
  async versionHead(key: string, specHash: string): Promise<VersionHead | undefined> {
    return jobs.versionHead(this.c, key, specHash);
  }
  async sentAnywhere(list: readonly VersionRef[]): Promise<Set<string>> {
    return jobs.sentAnywhere(this.c, list);
  }
  async knownVersions(list: readonly VersionRef[]): Promise<Set<string>> {
    return jobs.knownVersions(this.c, list);
  }
  async findJob(key: string, specHash: string): Promise<JobRow | undefined> {
    return jobs.findJob(this.c, key, specHash);
  }
  async findJobById(id: number): Promise<JobRow | undefined> {
    return jobs.findJobById(this.c, id);
  }
  async getJob(id: number): Promise<JobRow> {
    return jobs.getJob(this.c, id);
  }
  async listSentElsewhere(
    list: readonly { readonly key: string; readonly specHash: string }[],
    ignore: readonly string[],
  ): Promise<{ key: string; baseUrl: string }[]> {
    return jobs.listSentElsewhere(this.c, list, ignore);
  }
  async downloadedVersions(): Promise<Set<string>> {
    return jobs.downloadedVersions(this.c);
  }
  async madeSpecs(): Promise<Map<string, string>> {
    return jobs.madeSpecs(this.c);
  }
  async jobsByVersion(): Promise<Map<string, JobRow>> {
    return jobs.jobsByVersion(this.c);
  }
  async listJobs(): Promise<JobRow[]> {
    return jobs.listJobs(this.c);
  }
  async listManifestJobs(manifest: string): Promise<JobRow[]> {
    return jobs.listManifestJobs(this.c, manifest);
  }
  async listLatestJobs(): Promise<(JobRow & { base_url: string })[]> {
    return jobs.listLatestJobs(this.c);
  }
  async forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): Promise<number> {
    return jobs.forgetUnsentJobs(this.c, manifest, keep);
  }
  async listInFlight(): Promise<JobRow[]> {
    return jobs.listInFlight(this.c);
  }
  async listJobsWithFile(key: string, file: string): Promise<JobRow[]> {
    return jobs.listJobsWithFile(this.c, key, file);
  }
  async markInterruptedSubmissionsUncertain(): Promise<number> {
    return states.markInterruptedSubmissionsUncertain(this.c);
  }
  async markSubmitting(id: number, charge?: VideoCharge): Promise<number | null> {
    return states.markSubmitting(this.c, id, charge);
  }
  async withdrawSubmitting(id: number): Promise<void> {
    states.withdrawSubmitting(this.c, id);
  }
  async markSubmitted(id: number, taskId: string): Promise<string | undefined> {
    return states.markSubmitted(this.c, id, taskId);
  }
  async markUncertain(id: number, error: string): Promise<void> {
    states.markUncertain(this.c, id, error);
  }
  async markSpeechDoubt(id: number, error: string): Promise<void> {
    states.markSpeechDoubt(this.c, id, error);
  }
  async markFailed(id: number, kind: FailKind, error: string): Promise<void> {
    states.markFailed(this.c, id, kind, error);
  }
  async markRefused(id: number, error: string): Promise<void> {
    states.markRefused(this.c, id, error);
  }
  async markPending(id: number, why: string): Promise<boolean> {
    return states.markPending(this.c, id, why);
  }
  async recordTaskStatus(
    id: number,
    status: string,
    resultUrl: string | undefined,
    reason: string | undefined,
  ): Promise<void> {
    states.recordTaskStatus(this.c, id, status, resultUrl, reason);
  }
  async recordResultUrl(id: number, url: string): Promise<void> {
    states.recordResultUrl(this.c, id, url);
  }
  async markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): Promise<JobRow> {
    return states.markDownloaded(this.c, row, file, outDir, video);
  }
  async forgetDownload(row: JobRow): Promise<JobRow> {
    return states.forgetDownload(this.c, row);
  }
  async recordJobError(id: number, error: string): Promise<void> {
    states.recordJobError(this.c, id, error);
  }
  async clearJobError(row: JobRow): Promise<JobRow> {
    return states.clearJobError(this.c, row);
  }
  async recordVideoStamp(row: JobRow, stamp: string): Promise<JobRow> {
    return states.recordVideoStamp(this.c, row, stamp);
  }

  // ---- assets and speech (sql/assets.ts, sql/speech.ts) ----

  async findAsset(sha256: string): Promise<string | undefined> {
    return assets.findAsset(this.c, sha256);
  }
  async markUploading(sha256: string): Promise<void> {
    assets.markUploading(this.c, this.ownUploads, sha256);
  }
  async forgetUploadIntent(sha256: string): Promise<void> {
    assets.forgetUploadIntent(this.c, sha256);
  }
  async takeInterruptedUploads(): Promise<number> {
    return assets.takeInterruptedUploads(this.c);
  }
  async recordAsset(sha256: string, assetId: string, size: number): Promise<void> {
    assets.recordAsset(this.c, sha256, assetId, size);
  }
  async madeAsset(assetId: string): Promise<boolean> {
    return assets.madeAsset(this.c, assetId);
  }
  async forgetAssetId(assetId: string): Promise<void> {
    assets.forgetAssetId(this.c, assetId);
  }
  async findSpeech(voiceId: string, text: string): Promise<SpeechRow | undefined> {
    return speech.findSpeech(this.c, voiceId, text);
  }
  async markSpeechCreating(voiceId: string, text: string, charge?: SpeechCharge): Promise<void> {
    return speech.markSpeechCreating(this.c, voiceId, text, charge);
  }
  async markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): Promise<void> {
    speech.markSpeechDone(this.c, voiceId, text, assetId, duration);
  }
  async markSpeechUncertain(voiceId: string, text: string, error: string): Promise<void> {
    speech.markSpeechUncertain(this.c, voiceId, text, error);
  }
  async clearSpeech(voiceId: string, text: string): Promise<void> {
    speech.clearSpeech(this.c, voiceId, text);
  }
  async markInterruptedSpeechUncertain(): Promise<number> {
    return speech.markInterruptedSpeechUncertain(this.c);
  }

  // ---- the ledger of capped runs (sql/budget.ts) ----

  async openBudgetSessions(scope: string): Promise<OpenBudgetSession[]> {
    // The file's lock lets one process write it: every session not this store's has no run left.
    return budget
      .openBudgetSessions(this.c, scope)
      .map((session) => ({ ...session, runs: this.ownSessions.has(session.id) ? "here" : "gone" }));
  }
  async startBudgetSession(scope: string, owner: BudgetOwner): Promise<BudgetSessionRow> {
    const session = budget.startBudgetSession(this.c, scope, owner);
    this.ownSessions.add(session.id);
    return session;
  }
  async takeBudgetSession(session: BudgetSessionRow, owner: BudgetOwner): Promise<boolean> {
    const taken = this.ownSessions.has(session.id) || budget.takeBudgetSession(this.c, session, owner);
    if (taken) this.ownSessions.add(session.id);
    return taken;
  }
  async budgetSpent(id: number): Promise<SpendTally> {
    return budget.budgetSpent(this.c, id);
  }
  async refundVideo(session: number, jobId: number, attempt: number): Promise<void> {
    budget.refundVideo(this.c, session, jobId, attempt);
  }
  async refundSpeech(session: number, voiceId: string, text: string): Promise<void> {
    budget.refundSpeech(this.c, session, voiceId, text);
  }
  async endBudgetSession(id: number): Promise<void> {
    budget.endBudgetSession(this.c, id);
  }

  // ---- named budgets (sql/named-budgets.ts) ----

  // Written beside a run that holds the file (reel budget set): resolves once committed, so the
  // runners' next claims read it.
  async setBudget(name: string, change: NamedBudgetChange): Promise<NamedBudget> {
    return this.committed(() => this.turn.writeStatement(() => namedBudgets.setBudget(this.c, name, change)));
  }
  async findBudget(name: string): Promise<NamedBudget | undefined> {
    return namedBudgets.findBudget(this.c, name);
  }
  async listBudgets(): Promise<NamedBudget[]> {
    return namedBudgets.listBudgets(this.c);
  }

  // ---- reviewers' decisions (sql/decisions.ts) ----

  // A reviewer's writes resolve once committed: another process (the run that sends a retake, the
  // page of another reviewer) sees them then; a withdrawal is forced to disk, as an intent is.
  async recordDecisions(list: readonly NewDecision[]): Promise<DecisionRow[]> {
    return this.committed(() => decisions.recordDecisions(this.c, list));
  }
  async latestDecisions(
    versions?: readonly { readonly key: string; readonly specHash: string }[],
  ): Promise<DecisionRow[]> {
    return decisions.latestDecisions(this.c, versions);
  }
  async decisionHistory(key: string, specHash: string): Promise<DecisionRow[]> {
    return decisions.decisionHistory(this.c, key, specHash);
  }

  async queueRetake(request: RetakeRequest): Promise<RetakeRow> {
    return this.committed(() => retakes.queueRetake(this.c, request));
  }
  async withdrawRetake(key: string): Promise<"withdrawn" | "sent" | "none"> {
    return this.committed(() => retakes.withdrawRetake(this.c, key));
  }

  /**
   * `write`'s result once its turn is committed, also when it failed (its turn ends then, rather
   * than holding the file's write lock until the event loop comes round).
   */
  private async committed<T>(write: () => T): Promise<T> {
    let result: T;
    try {
      result = write();
    } catch (error) {
      await this.turn.durable().catch(() => {});
      throw error;
    }
    await this.turn.durable();
    return result;
  }
  async listRetakes(manifests?: readonly string[]): Promise<RetakeRow[]> {
    return retakes.listRetakes(this.c, manifests);
  }
  async changeMark(): Promise<string> {
    return changeMarks.changeMark(this.c);
  }

  // ---- what reel learned of the service (sql/learned.ts) ----

  async readRunTimes(): Promise<string | undefined> {
    return learned.readRunTimes(this.c);
  }
  async writeRunTimes(data: string): Promise<void> {
    learned.writeRunTimes(this.c, data);
  }

  // ---- the manifests of each output folder (sql/out-manifests.ts) ----

  async recordOutManifest(outDir: string, manifest: string): Promise<void> {
    outputs.recordOutManifest(this.c, outDir, manifest);
  }
  async outManifests(outDir: string): Promise<string[]> {
    return outputs.outManifests(this.c, outDir);
  }
  async forgetOutManifest(outDir: string, manifest: string): Promise<boolean> {
    return outputs.forgetOutManifest(this.c, outDir, manifest);
  }

  // ---- local caches (sql/caches.ts) ----

  async findFileHash(path: string, stamp: FileStamp): Promise<string | undefined> {
    return caches.findFileHash(this.c, path, stamp);
  }
  async recordFileHash(path: string, stamp: FileStamp, sha256: string): Promise<void> {
    caches.recordFileHash(this.c, path, stamp, sha256);
  }
  async findRemote(url: string): Promise<{ sha256: string; path: string; size: number } | undefined> {
    return caches.findRemote(this.c, url);
  }
  async recordRemote(url: string, sha256: string, path: string, size: number): Promise<void> {
    caches.recordRemote(this.c, url, sha256, path, size);
  }
}
