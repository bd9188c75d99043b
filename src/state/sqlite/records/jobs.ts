// The job versions of the state file (JobRecords): reads and adds in sql/jobs.ts, state changes in
// sql/job-states.ts, rows rebuilt from the records in sql/restore.ts. Each statement runs when its
// method is called; the intent of a submission resolves once its turn is on disk.
import type { JobRecords } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as states from "../sql/job-states.js";
import * as jobs from "../sql/jobs.js";
import { restoreJobs } from "../sql/restore.js";

export function jobRecords(c: SqlContext): JobRecords {
  return {
    async upsertJobs(list) {
      return jobs.upsertJobs(c, list);
    },
    async restoreJobs(list) {
      return restoreJobs(c, list);
    },
    async versionHead(key, specHash) {
      return jobs.versionHead(c, key, specHash);
    },
    async notSentAnywhere(list) {
      return jobs.notSentAnywhere(c, list);
    },
    async notRecorded(list) {
      return jobs.notRecorded(c, list);
    },
    async jobsOfVersions(list) {
      return jobs.jobsOfVersions(c, list);
    },
    async findJob(key, specHash) {
      return jobs.findJob(c, key, specHash);
    },
    async findJobById(id) {
      return jobs.findJobById(c, id);
    },
    async getJob(id) {
      return jobs.getJob(c, id);
    },
    async listSentElsewhere(list, ignore) {
      return jobs.listSentElsewhere(c, list, ignore);
    },
    async downloadedVersions() {
      return jobs.downloadedVersions(c);
    },
    async madeSpecs(specHashes) {
      return jobs.madeSpecs(c, specHashes);
    },
    async jobsByVersion() {
      return jobs.jobsByVersion(c);
    },
    async listJobs() {
      return jobs.listJobs(c);
    },
    async listManifestJobs(manifest) {
      return jobs.listManifestJobs(c, manifest);
    },
    async listLatestJobs() {
      return jobs.listLatestJobs(c);
    },
    async forgetUnsentJobs(manifest, keep) {
      return jobs.forgetUnsentJobs(c, manifest, keep);
    },
    async listInFlight() {
      return jobs.listInFlight(c);
    },
    async listJobsWithFile(key, file) {
      return jobs.listJobsWithFile(c, key, file);
    },
    async markInterruptedSubmissionsUncertain() {
      return states.markInterruptedSubmissionsUncertain(c);
    },
    async markSubmitting(id, charge) {
      return states.markSubmitting(c, id, charge);
    },
    async withdrawSubmitting(id) {
      states.withdrawSubmitting(c, id);
    },
    async markSubmitted(id, taskId) {
      return states.markSubmitted(c, id, taskId);
    },
    async markUncertain(id, error) {
      states.markUncertain(c, id, error);
    },
    async markSpeechDoubt(id, error) {
      states.markSpeechDoubt(c, id, error);
    },
    async markFailed(id, kind, error) {
      states.markFailed(c, id, kind, error);
    },
    async markRefused(id, error) {
      states.markRefused(c, id, error);
    },
    async markPending(id, why) {
      return states.markPending(c, id, why);
    },
    async recordTaskStatus(id, status, resultUrl, reason) {
      states.recordTaskStatus(c, id, status, resultUrl, reason);
    },
    async recordResultUrl(id, url) {
      states.recordResultUrl(c, id, url);
    },
    async markDownloaded(row, file, outDir, video) {
      return states.markDownloaded(c, row, file, outDir, video);
    },
    async forgetDownload(row) {
      return states.forgetDownload(c, row);
    },
    async recordJobError(id, error) {
      states.recordJobError(c, id, error);
    },
    async clearJobError(row) {
      return states.clearJobError(c, row);
    },
    async recordVideoStamp(row, stamp) {
      return states.recordVideoStamp(c, row, stamp);
    },
  };
}
