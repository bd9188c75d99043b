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
import type Database from "better-sqlite3";
import { canonicalBaseUrl } from "../service/base-url.js";
import type { StateLock } from "./db/lock.js";
import { type OpenStateOptions, openStateDatabase, realStatePath } from "./db/open.js";
import { lastService } from "./db/services.js";
import { Statements } from "./db/statements.js";
import type { StateFileError } from "./errors.js";
import type {
  FailKind,
  FileStamp,
  JobHead,
  JobRow,
  JobStore,
  NewJob,
  RestoredJob,
  SpeechRow,
  VersionHead,
  VideoFacts,
} from "./job-store.js";
import * as assets from "./sql/assets.js";
import * as caches from "./sql/caches.js";
import type { SqlContext } from "./sql/context.js";
import * as states from "./sql/job-states.js";
import * as jobs from "./sql/jobs.js";
import { restoreJobs } from "./sql/restore.js";
import * as speech from "./sql/speech.js";
import { Turn } from "./turn.js";

export { ClaimLostError, StateFileError } from "./errors.js";
export type { OpenStateOptions } from "./db/open.js";
export * from "./job-store.js";

/** Stores open for writing: a process that exits without closing one still commits its last turn. */
const openStores = new Set<StateStore>();

/**
 * Commits the last turn of every store still open. The CLI calls it at the process's exit (see
 * cli/main.ts); importing this module registers nothing.
 */
export function flushOpenStores(): void {
  for (const store of openStores) store.flush();
}

export class StateStore implements JobStore {
  private readonly c: SqlContext;
  private readonly turn: Turn;
  /** Upload intents this store wrote: one found that it did not write is another process's. */
  private readonly ownUploads = new Set<string>();
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
    this.turn = new Turn(db, statements, now, path, `${realStatePath(path)}-wal`, !readonly);
    this.c = { db, statements, turn: this.turn, serviceId, now };
    this.journalScope =
      readonly || baseUrl === undefined ? undefined : StateStore.journalScopeOf(path, baseUrl);
    if (!readonly) openStores.add(this);
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
      store.close();
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
      store.close();
    }
  }

  close(): void {
    try {
      if (this.db.open) {
        this.flush();
        openStores.delete(this);
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

  flush(): void {
    if (this.readonly) return;
    this.turn.flush();
  }

  // ---- jobs (sql/jobs.ts, sql/job-states.ts, sql/restore.ts) ----

  upsertJob(job: NewJob): JobRow {
    return jobs.upsertJob(this.c, job);
  }
  upsertJobs(list: readonly NewJob[]): JobHead[] {
    return jobs.upsertJobs(this.c, list);
  }
  restoreJobs(list: readonly RestoredJob[]): number {
    return restoreJobs(this.c, list);
  }
  versionHead(key: string, specHash: string): VersionHead | undefined {
    return jobs.versionHead(this.c, key, specHash);
  }
  wasSentAnywhere(key: string, specHash: string): boolean {
    return jobs.wasSentAnywhere(this.c, key, specHash);
  }
  hasJob(key: string, specHash: string): boolean {
    return jobs.hasJob(this.c, key, specHash);
  }
  findJob(key: string, specHash: string): JobRow | undefined {
    return jobs.findJob(this.c, key, specHash);
  }
  findJobById(id: number): JobRow | undefined {
    return jobs.findJobById(this.c, id);
  }
  getJob(id: number): JobRow {
    return jobs.getJob(this.c, id);
  }
  listSentElsewhere(
    list: readonly { readonly key: string; readonly specHash: string }[],
    ignore: readonly string[],
  ): { key: string; baseUrl: string }[] {
    return jobs.listSentElsewhere(this.c, list, ignore);
  }
  downloadedVersions(): Set<string> {
    return jobs.downloadedVersions(this.c);
  }
  madeSpecs(): Map<string, string> {
    return jobs.madeSpecs(this.c);
  }
  jobsByVersion(): Map<string, JobRow> {
    return jobs.jobsByVersion(this.c);
  }
  listJobs(): JobRow[] {
    return jobs.listJobs(this.c);
  }
  listLatestJobs(): (JobRow & { base_url: string })[] {
    return jobs.listLatestJobs(this.c);
  }
  forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): number {
    return jobs.forgetUnsentJobs(this.c, manifest, keep);
  }
  listInFlight(): JobRow[] {
    return jobs.listInFlight(this.c);
  }
  listJobsWithFile(key: string, file: string, outDir: string): JobRow[] {
    return jobs.listJobsWithFile(this.c, key, file, outDir);
  }
  markInterruptedSubmissionsUncertain(): number {
    return states.markInterruptedSubmissionsUncertain(this.c);
  }
  markSubmitting(id: number): Promise<number | null> {
    return states.markSubmitting(this.c, id);
  }
  withdrawSubmitting(id: number): void {
    states.withdrawSubmitting(this.c, id);
  }
  markSubmitted(id: number, taskId: string): void {
    states.markSubmitted(this.c, id, taskId);
  }
  markUncertain(id: number, error: string): void {
    states.markUncertain(this.c, id, error);
  }
  markFailed(id: number, kind: FailKind, error: string): void {
    states.markFailed(this.c, id, kind, error);
  }
  markRefused(id: number, error: string): void {
    states.markRefused(this.c, id, error);
  }
  markPending(id: number, why: string): boolean {
    return states.markPending(this.c, id, why);
  }
  recordTaskStatus(
    id: number,
    status: string,
    resultUrl: string | undefined,
    reason: string | undefined,
  ): void {
    states.recordTaskStatus(this.c, id, status, resultUrl, reason);
  }
  recordResultUrl(id: number, url: string): void {
    states.recordResultUrl(this.c, id, url);
  }
  markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): JobRow {
    return states.markDownloaded(this.c, row, file, outDir, video);
  }
  forgetDownload(row: JobRow): JobRow {
    return states.forgetDownload(this.c, row);
  }
  recordJobError(id: number, error: string): void {
    states.recordJobError(this.c, id, error);
  }
  clearJobError(row: JobRow): JobRow {
    return states.clearJobError(this.c, row);
  }
  recordVideoStamp(row: JobRow, stamp: string): JobRow {
    return states.recordVideoStamp(this.c, row, stamp);
  }

  // ---- assets and speech (sql/assets.ts, sql/speech.ts) ----

  findAsset(sha256: string): string | undefined {
    return assets.findAsset(this.c, sha256);
  }
  markUploading(sha256: string): void {
    assets.markUploading(this.c, this.ownUploads, sha256);
  }
  forgetUploadIntent(sha256: string): void {
    assets.forgetUploadIntent(this.c, sha256);
  }
  takeInterruptedUploads(): number {
    return assets.takeInterruptedUploads(this.c);
  }
  recordAsset(sha256: string, assetId: string, size: number): void {
    assets.recordAsset(this.c, sha256, assetId, size);
  }
  madeAsset(assetId: string): boolean {
    return assets.madeAsset(this.c, assetId);
  }
  forgetAssetId(assetId: string): void {
    assets.forgetAssetId(this.c, assetId);
  }
  findSpeech(voiceId: string, text: string): SpeechRow | undefined {
    return speech.findSpeech(this.c, voiceId, text);
  }
  markSpeechCreating(voiceId: string, text: string): Promise<void> {
    return speech.markSpeechCreating(this.c, voiceId, text);
  }
  markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): void {
    speech.markSpeechDone(this.c, voiceId, text, assetId, duration);
  }
  markSpeechUncertain(voiceId: string, text: string, error: string): void {
    speech.markSpeechUncertain(this.c, voiceId, text, error);
  }
  clearSpeech(voiceId: string, text: string): void {
    speech.clearSpeech(this.c, voiceId, text);
  }
  markInterruptedSpeechUncertain(): number {
    return speech.markInterruptedSpeechUncertain(this.c);
  }

  // ---- local caches (sql/caches.ts) ----

  findFileHash(path: string, stamp: FileStamp): string | undefined {
    return caches.findFileHash(this.c, path, stamp);
  }
  recordFileHash(path: string, stamp: FileStamp, sha256: string): void {
    caches.recordFileHash(this.c, path, stamp, sha256);
  }
  findRemote(url: string): { sha256: string; path: string; size: number } | undefined {
    return caches.findRemote(this.c, url);
  }
  recordRemote(url: string, sha256: string, path: string, size: number): void {
    caches.recordRemote(this.c, url, sha256, path, size);
  }
}
