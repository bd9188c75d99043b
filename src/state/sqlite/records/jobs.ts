// The job versions of the state file (JobRecords): reads and adds in sql/jobs.ts, state changes in
// sql/job-states.ts, rows rebuilt from the records in sql/restore.ts. Each statement runs when its
// method is called; the intent of a submission resolves once its turn is on disk.
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
import type { SqlContext } from "../sql/context.js";
import * as states from "../sql/job-states.js";
import * as jobs from "../sql/jobs.js";
import { restoreJobs } from "../sql/restore.js";

export function jobRecords(c: SqlContext): JobRecords {
  return {
    async upsertJobs(list: readonly NewJob[]): Promise<JobHead[]> {
      return jobs.upsertJobs(c, list);
    },
    async restoreJobs(list: readonly RestoredJob[]): Promise<number> {
      return restoreJobs(c, list);
    },
    async versionHead(key: string, specHash: string): Promise<VersionHead | undefined> {
      return jobs.versionHead(c, key, specHash);
    },
    async notSentAnywhere<T extends VersionRef>(list: readonly T[]): Promise<T[]> {
      return jobs.notSentAnywhere(c, list);
    },
    async notRecorded<T extends VersionRef>(list: readonly T[]): Promise<T[]> {
      return jobs.notRecorded(c, list);
    },
    async jobsOfVersions(list: readonly VersionRef[]): Promise<JobRow[]> {
      return jobs.jobsOfVersions(c, list);
    },
    async findJob(key: string, specHash: string): Promise<JobRow | undefined> {
      return jobs.findJob(c, key, specHash);
    },
    async findJobById(id: number): Promise<JobRow | undefined> {
      return jobs.findJobById(c, id);
    },
    async getJob(id: number): Promise<JobRow> {
      return jobs.getJob(c, id);
    },
    async listSentElsewhere(
      list: readonly { readonly key: string; readonly specHash: string }[],
      ignore: readonly string[],
    ): Promise<{ key: string; baseUrl: string }[]> {
      return jobs.listSentElsewhere(c, list, ignore);
    },
    async downloadedVersions(): Promise<Set<string>> {
      return jobs.downloadedVersions(c);
    },
    async madeSpecs(specHashes?: readonly string[]): Promise<Map<string, string>> {
      return jobs.madeSpecs(c, specHashes);
    },
    async jobsByVersion(): Promise<Map<string, JobRow>> {
      return jobs.jobsByVersion(c);
    },
    async listJobs(): Promise<JobRow[]> {
      return jobs.listJobs(c);
    },
    async listManifestJobs(manifest: string): Promise<JobRow[]> {
      return jobs.listManifestJobs(c, manifest);
    },
    async listLatestJobs(): Promise<(JobRow & { base_url: string })[]> {
      return jobs.listLatestJobs(c);
    },
    async forgetUnsentJobs(manifest: string, keep: ReadonlySet<string>): Promise<number> {
      return jobs.forgetUnsentJobs(c, manifest, keep);
    },
    async listInFlight(): Promise<JobRow[]> {
      return jobs.listInFlight(c);
    },
    async listJobsWithFile(key: string, file: string): Promise<JobRow[]> {
      return jobs.listJobsWithFile(c, key, file);
    },
    async markInterruptedSubmissionsUncertain(): Promise<number> {
      return states.markInterruptedSubmissionsUncertain(c);
    },
    async markSubmitting(id: number, charge?: VideoCharge): Promise<number | null> {
      return states.markSubmitting(c, id, charge);
    },
    async withdrawSubmitting(id: number): Promise<void> {
      states.withdrawSubmitting(c, id);
    },
    async markSubmitted(id: number, taskId: string): Promise<string | undefined> {
      return states.markSubmitted(c, id, taskId);
    },
    async markUncertain(id: number, error: string): Promise<void> {
      states.markUncertain(c, id, error);
    },
    async markSpeechDoubt(id: number, error: string): Promise<void> {
      states.markSpeechDoubt(c, id, error);
    },
    async markFailed(id: number, kind: FailKind, error: string): Promise<void> {
      states.markFailed(c, id, kind, error);
    },
    async markRefused(id: number, error: string): Promise<void> {
      states.markRefused(c, id, error);
    },
    async markPending(id: number, why: string): Promise<boolean> {
      return states.markPending(c, id, why);
    },
    async recordTaskStatus(
      id: number,
      status: string,
      resultUrl: string | undefined,
      reason: string | undefined,
    ): Promise<void> {
      states.recordTaskStatus(c, id, status, resultUrl, reason);
    },
    async recordResultUrl(id: number, url: string): Promise<void> {
      states.recordResultUrl(c, id, url);
    },
    async markDownloaded(row: JobRow, file: string, outDir: string, video?: VideoFacts): Promise<JobRow> {
      return states.markDownloaded(c, row, file, outDir, video);
    },
    async forgetDownload(row: JobRow): Promise<JobRow> {
      return states.forgetDownload(c, row);
    },
    async recordJobError(id: number, error: string): Promise<void> {
      states.recordJobError(c, id, error);
    },
    async clearJobError(row: JobRow): Promise<JobRow> {
      return states.clearJobError(c, row);
    },
    async recordVideoStamp(row: JobRow, stamp: string): Promise<JobRow> {
      return states.recordVideoStamp(c, row, stamp);
    },
  };
}
