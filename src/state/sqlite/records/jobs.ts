// The job versions of the state file (JobRecords): reads and adds in sql/jobs.ts, state changes in
// sql/job-states.ts, rows rebuilt from the records in sql/restore.ts. Each statement runs when its
// method is called; the intent of a submission resolves once its turn is on disk.
import type { JobRecords } from "../../job-store.js";
import { methodsOn, type SqlContext } from "../sql/context.js";
import * as states from "../sql/job-states.js";
import * as jobs from "../sql/jobs.js";
import { restoreJobs } from "../sql/restore.js";

export function jobRecords(c: SqlContext): JobRecords {
  const on = methodsOn(c);
  return {
    upsertJobs: on(jobs.upsertJobs),
    restoreJobs: on(restoreJobs),
    versionHead: on(jobs.versionHead),
    notSentAnywhere: on(jobs.notSentAnywhere),
    notRecorded: on(jobs.notRecorded),
    jobsOfVersions: on(jobs.jobsOfVersions),
    findJob: on(jobs.findJob),
    findJobById: on(jobs.findJobById),
    getJob: on(jobs.getJob),
    listSentElsewhere: on(jobs.listSentElsewhere),
    downloadedVersions: on(jobs.downloadedVersions),
    madeSpecs: on(jobs.madeSpecs),
    jobsByVersion: on(jobs.jobsByVersion),
    listJobs: on(jobs.listJobs),
    listManifestJobs: on(jobs.listManifestJobs),
    listLatestJobs: on(jobs.listLatestJobs),
    forgetUnsentJobs: on(jobs.forgetUnsentJobs),
    listInFlight: on(jobs.listInFlight),
    listJobsWithFile: on(jobs.listJobsWithFile),
    markInterruptedSubmissionsUncertain: on(states.markInterruptedSubmissionsUncertain),
    markSubmitting: on(states.markSubmitting),
    withdrawSubmitting: on(states.withdrawSubmitting),
    markSubmitted: on(states.markSubmitted),
    markUncertain: on(states.markUncertain),
    markSpeechDoubt: on(states.markSpeechDoubt),
    markFailed: on(states.markFailed),
    markRefused: on(states.markRefused),
    markPending: on(states.markPending),
    recordTaskStatus: on(states.recordTaskStatus),
    recordResultUrl: on(states.recordResultUrl),
    markDownloaded: on(states.markDownloaded),
    forgetDownload: on(states.forgetDownload),
    recordJobError: on(states.recordJobError),
    clearJobError: on(states.clearJobError),
    recordVideoStamp: on(states.recordVideoStamp),
  };
}
