// Which job rows `reel run --rebuild-state` writes back from the records in the output folder, and
// what it writes: one rule for every backend (the SQLite state file's sql/restore.ts, PostgreSQL's
// pg/sql/restore.ts), so that the two cannot come to disagree on what a record may replace.
import type { JobState, RestoredJob } from "./job-store.js";

/** What the store holds of the job version a record names, when it holds it. */
export interface HeldRow {
  readonly state: JobState | string;
  readonly spec_json: string;
  readonly attempts: number;
}

/** The columns a restored row is written with, in the order of restoredValues. */
export const RESTORED_COLUMNS =
  "service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, file, out_dir, file_size, file_sha256, error, created_at, submitted_at, finished_at, downloaded_at, updated_at";

/**
 * The values to write for `job` over `held` (see JobRecords.restoreJobs), or undefined when the
 * row is kept as it is: only a row unknown, known as unsent or as an intent (an older copy of the
 * state), or an uncertain one whose same attempt's task id the journal kept, takes the record.
 */
export function restoredValues(
  serviceId: number,
  held: HeldRow | undefined,
  job: RestoredJob,
  now: number,
): unknown[] | undefined {
  const answered = held?.state === "uncertain" && job.taskId !== null && job.attempts >= held.attempts;
  if (held && held.state !== "pending" && held.state !== "submitting" && !answered) return undefined;
  // The spec the row holds, when the record has none (results.jsonl and the journal carry none).
  const specJson = held && job.specJson === "null" ? held.spec_json : job.specJson;
  return [
    serviceId,
    job.key,
    job.manifest,
    job.videoId,
    job.specHash,
    specJson,
    job.seconds,
    job.model,
    job.state,
    job.failKind,
    job.attempts,
    job.taskId,
    job.taskStatus,
    job.file,
    job.outDir,
    job.fileSize,
    job.fileSha256,
    job.error,
    job.createdAt,
    job.submittedAt,
    job.finishedAt,
    job.downloadedAt,
    now,
  ];
}

/** The event a restored row records. */
export function restoredDetail(job: RestoredJob): string {
  return `${job.state}${job.taskId ? ` (task ${job.taskId})` : ""}`;
}
