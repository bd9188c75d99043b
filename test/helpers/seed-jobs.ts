// Jobs put in a store as a run's first step puts them (upsertJobs), for a test to work on: the store's
// interface returns only their heads, a test wants their whole rows.
import type { JobRecords, JobRow, NewJob, RestoredJob } from "../../src/state/job-store.js";

/** The one job most store tests work on: a version of m/a, five seconds of actor-2. */
export const JOB: NewJob = {
  key: "m/a",
  manifest: "m",
  videoId: "a",
  specHash: "h1",
  specJson: "{}",
  seconds: 5,
  model: "actor-2",
};

/** Records `job` (created as pending if new, else found as it is) and returns its whole row. */
export async function seedJob(
  store: Pick<JobRecords, "upsertJobs" | "getJob">,
  job: NewJob,
): Promise<JobRow> {
  const [head] = await store.upsertJobs([job]);
  return store.getJob(head!.id);
}

/** `job` as its record in the output folder gives it back (`--rebuild-state`): submitted as `taskId`. */
export function submittedRecord(job: NewJob, taskId: string): RestoredJob {
  return {
    ...job,
    state: "submitted",
    failKind: null,
    attempts: 1,
    taskId,
    taskStatus: "Running",
    file: null,
    outDir: null,
    fileSize: null,
    fileSha256: null,
    error: null,
    createdAt: 1,
    submittedAt: 2,
    finishedAt: null,
    downloadedAt: null,
  };
}
