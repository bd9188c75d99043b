// The job versions of the shared store (JobRecords): reads and adds in sql/jobs.ts, state changes
// in sql/job-states.ts, rows rebuilt in sql/restore.ts; the claim and its answer are the fleet's
// (sql/claims.ts), fenced by this runner's lease. Every statement goes through the outage.
import type { JobRecords } from "../../job-store.js";
import type { PgSide } from "./side.js";
import * as claims from "../sql/claims.js";
import * as states from "../sql/job-states.js";
import * as jobs from "../sql/jobs.js";
import { restoreJobs } from "../sql/restore.js";

export function jobRecords(s: PgSide): JobRecords {
  return {
    upsertJobs(list) {
      return s.io(() => jobs.upsertJobs(s.c, list));
    },
    restoreJobs(list) {
      return s.io(() => restoreJobs(s.c, list));
    },
    versionHead(key, specHash) {
      return s.io(() => jobs.versionHead(s.c, key, specHash));
    },
    notSentAnywhere(list) {
      return s.io(() => jobs.notSentAnywhere(s.c, list));
    },
    notRecorded(list) {
      return s.io(() => jobs.notRecorded(s.c, list));
    },
    jobsOfVersions(list) {
      return s.io(() => jobs.jobsOfVersions(s.c, list));
    },
    findJob(key, specHash) {
      return s.io(() => jobs.findJob(s.c, key, specHash));
    },
    findJobById(id) {
      return s.io(() => jobs.findJobById(s.c, id));
    },
    getJob(id) {
      return s.io(() => jobs.getJob(s.c, id));
    },
    listSentElsewhere(list, ignore) {
      return s.io(() => jobs.listSentElsewhere(s.c, list, ignore));
    },
    downloadedVersions() {
      return s.io(() => jobs.downloadedVersions(s.c));
    },
    madeSpecs(specHashes) {
      return s.io(() => jobs.madeSpecs(s.c, specHashes));
    },
    jobsByVersion() {
      return s.io(() => jobs.jobsByVersion(s.c));
    },
    listJobs() {
      return s.io(() => jobs.listJobs(s.c));
    },
    listManifestJobs(manifest) {
      return s.io(() => jobs.listManifestJobs(s.c, manifest));
    },
    listLatestJobs() {
      return s.io(() => jobs.listLatestJobs(s.c));
    },
    forgetUnsentJobs(manifest, keep) {
      return s.io(() => jobs.forgetUnsentJobs(s.c, manifest, keep));
    },
    listInFlight() {
      return s.io(() => jobs.listInFlight(s.c));
    },
    listJobsWithFile(key, file) {
      return s.io(() => jobs.listJobsWithFile(s.c, key, file));
    },
    /** The submissions of gone runners only (see sql/takeover.ts): never a live runner's. */
    async markInterruptedSubmissionsUncertain() {
      return (await s.takeOverLost()).uncertain;
    },
    markSubmitting(id, charge) {
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
    withdrawSubmitting(id) {
      return s.io(() => states.withdrawSubmitting(s.writer(), id));
    },
    markSubmitted(id, taskId) {
      const w = s.writer();
      return s.fenced(
        s.io(
          () => claims.answerJob(w, id, taskId),
          () => claims.answerLanded(w, id, taskId),
        ),
      );
    },
    markUncertain(id, error) {
      return s.io(() => states.markUncertain(s.writer(), id, error));
    },
    markSpeechDoubt(id, error) {
      return s.io(() => states.markSpeechDoubt(s.writer(), id, error));
    },
    markFailed(id, kind, error) {
      return s.io(() => states.markFailed(s.writer(), id, kind, error));
    },
    markRefused(id, error) {
      return s.io(() => states.markRefused(s.c, id, error));
    },
    markPending(id, why) {
      // Tried again after a broken connection, a job found pending is this call's doing (or another's
      // at the same moment: either way, pending now).
      return s.io(
        () => states.markPending(s.c, id, why),
        async () => ((await jobs.findJobById(s.c, id))?.state === "pending" ? { value: true } : undefined),
      );
    },
    recordTaskStatus(id, status, resultUrl, reason) {
      return s.fenced(s.io(() => states.recordTaskStatus(s.writer(), id, status, resultUrl, reason)));
    },
    recordResultUrl(id, url) {
      return s.io(() => states.recordResultUrl(s.c, id, url));
    },
    markDownloaded(row, file, outDir, video) {
      return s.io(() => states.markDownloaded(s.c, row, file, outDir, video));
    },
    forgetDownload(row) {
      return s.io(() => states.forgetDownload(s.c, row));
    },
    recordJobError(id, error) {
      return s.io(() => states.recordJobError(s.c, id, error));
    },
    clearJobError(row) {
      return s.io(() => states.clearJobError(s.c, row));
    },
    recordVideoStamp(row, stamp) {
      return s.io(() => states.recordVideoStamp(s.c, row, stamp));
    },
  };
}
