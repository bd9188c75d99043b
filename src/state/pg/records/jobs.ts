// The job versions of the shared store (JobRecords): reads and adds in sql/jobs.ts, state changes
// in sql/job-states.ts, rows rebuilt in sql/restore.ts; the claim and its answer are the fleet's
// (sql/claims.ts), fenced by this runner's lease. Every statement goes through the outage.
import type {
  FailKind,
  JobHead,
  JobRow,
  NewJob,
  RestoredJob,
  VersionHead,
  VersionRef,
  VideoCharge,
  VideoFacts,
  JobRecords,
} from "../../job-store.js";
import type { PgSide } from "./side.js";
import * as claims from "../sql/claims.js";
import * as states from "../sql/job-states.js";
import * as jobs from "../sql/jobs.js";
import { restoreJobs } from "../sql/restore.js";

export function jobRecords(s: PgSide): JobRecords {
  return {
    upsertJobs(list: readonly NewJob[]): Promise<JobHead[]> {
      return s.io(() => jobs.upsertJobs(s.c, list));
    },
    restoreJobs(list: readonly RestoredJob[]): Promise<number> {
      return s.io(() => restoreJobs(s.c, list));
    },
    versionHead(key: string, specHash: string): Promise<VersionHead | undefined> {
      return s.io(() => jobs.versionHead(s.c, key, specHash));
    },
    notSentAnywhere<T extends VersionRef>(list: readonly T[]): Promise<T[]> {
      return s.io(() => jobs.notSentAnywhere(s.c, list));
    },
    notRecorded<T extends VersionRef>(list: readonly T[]): Promise<T[]> {
      return s.io(() => jobs.notRecorded(s.c, list));
    },
    jobsOfVersions(list: readonly VersionRef[]): Promise<JobRow[]> {
      return s.io(() => jobs.jobsOfVersions(s.c, list));
    },
    findJob(key: string, specHash: string): Promise<JobRow | undefined> {
      return s.io(() => jobs.findJob(s.c, key, specHash));
    },
    findJobById(id: number): Promise<JobRow | undefined> {
      return s.io(() => jobs.findJobById(s.c, id));
    },
    getJob(id: number): Promise<JobRow> {
      return s.io(() => jobs.getJob(s.c, id));
    },
    listSentElsewhere(
      list: readonly { readonly key: string; readonly specHash: string }[],
      ignore: readonly string[],
    ): Promise<{ key: string; baseUrl: string }[]> {
      return s.io(() => jobs.listSentElsewhere(s.c, list, ignore));
    },
    downloadedVersions(): Promise<Set<string>> {
      return s.io(() => jobs.downloadedVersions(s.c));
    },
    madeSpecs(specHashes?: readonly string[]): Promise<Map<string, string>> {
      return s.io(() => jobs.madeSpecs(s.c, specHashes));
    },
    jobsByVersion(): Promise<Map<string, JobRow>> {
      return s.io(() => jobs.jobsByVersion(s.c));
    },
    listJobs(): Promise<JobRow[]> {
      return s.io(() => jobs.listJobs(s.c));
    },
    listManifestJobs(manifest: string): Promise<JobRow[]> {
      return s.io(() => jobs.listManifestJobs(s.c, manifest));
    },
    listLatestJobs(): Promise<(JobRow & { base_url: string })[]> {
      return s.io(() => jobs.listLatestJobs(s.c));
    },
    forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): Promise<number> {
      return s.io(() => jobs.forgetUnsentJobs(s.c, manifest, keep));
    },
    listInFlight(): Promise<JobRow[]> {
      return s.io(() => jobs.listInFlight(s.c));
    },
    listJobsWithFile(key: string, file: string): Promise<JobRow[]> {
      return s.io(() => jobs.listJobsWithFile(s.c, key, file));
    },
    /** The submissions of gone runners only (see sql/takeover.ts): never a live runner's. */
    async markInterruptedSubmissionsUncertain(): Promise<number> {
      return (await s.takeOverLost()).uncertain;
    },
    markSubmitting(id: number, charge?: VideoCharge): Promise<number | null | "full"> {
      const w = s.writer();
      return s
        .fenced(
          s.io<claims.Claim>(
            () => claims.claimJob(w, id, charge),
            () => claims.claimLanded(w, id),
          ),
        )
        .then((claim) => {
          if (typeof claim === "number") s.claimed();
          return claim;
        });
    },
    withdrawSubmitting(id: number): Promise<void> {
      return s.io(() => states.withdrawSubmitting(s.writer(), id));
    },
    markSubmitted(id: number, taskId: string): Promise<string | undefined> {
      const w = s.writer();
      return s.fenced(
        s.io(
          () => claims.answerJob(w, id, taskId),
          () => claims.answerLanded(w, id, taskId),
        ),
      );
    },
    markUncertain(id: number, error: string): Promise<void> {
      return s.io(() => states.markUncertain(s.writer(), id, error));
    },
    markSpeechDoubt(id: number, error: string): Promise<void> {
      return s.io(() => states.markSpeechDoubt(s.writer(), id, error));
    },
    markFailed(id: number, kind: FailKind, error: string): Promise<void> {
      return s.io(() => states.markFailed(s.writer(), id, kind, error));
    },
    markRefused(id: number, error: string): Promise<void> {
      return s.io(() => states.markRefused(s.c, id, error));
    },
    markPending(id: number, why: string): Promise<boolean> {
      // Tried again after a broken connection, a job found pending is this call's doing (or another's
      // at the same moment: either way, pending now).
      return s.io(
        () => states.markPending(s.c, id, why),
        async () => ((await jobs.findJobById(s.c, id))?.state === "pending" ? { value: true } : undefined),
      );
    },
    recordTaskStatus(
      id: number,
      status: string,
      resultUrl: string | undefined,
      reason: string | undefined,
    ): Promise<void> {
      return s.fenced(s.io(() => states.recordTaskStatus(s.writer(), id, status, resultUrl, reason)));
    },
    recordResultUrl(id: number, url: string): Promise<void> {
      return s.io(() => states.recordResultUrl(s.c, id, url));
    },
    markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): Promise<JobRow> {
      return s.io(() => states.markDownloaded(s.c, row, file, outDir, video));
    },
    forgetDownload(row: JobRow): Promise<JobRow> {
      return s.io(() => states.forgetDownload(s.c, row));
    },
    recordJobError(id: number, error: string): Promise<void> {
      return s.io(() => states.recordJobError(s.c, id, error));
    },
    clearJobError(row: JobRow): Promise<JobRow> {
      return s.io(() => states.clearJobError(s.c, row));
    },
    recordVideoStamp(row: JobRow, stamp: string): Promise<JobRow> {
      return s.io(() => states.recordVideoStamp(s.c, row, stamp));
    },
  };
}
