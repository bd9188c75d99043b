// A job version as the store records it, and the names a caller gives one (see ../job-store.ts).

export type JobState = "pending" | "submitting" | "submitted" | "Success" | "Fail" | "Canceled" | "uncertain";
/**
 * Why a job failed (`Fail`, `Canceled`): before anything was sent (`local`), its submission refused
 * (`rejected`), or its task ended so (`task`). On an `uncertain` job, `speech`: the doubt is its
 * speech's alone (a call perhaps paid for, with no answer recorded) and its own submission was never
 * claimed, so once that speech is known it may go back to pending (engine/speech-doubt.ts).
 */
export type FailKind = "local" | "rejected" | "task" | "speech";

/** A job version as recorded (the column names of the SQLite table, which callers read). */
export interface JobRow {
  readonly id: number;
  readonly job_key: string;
  readonly manifest: string;
  readonly video_id: string;
  readonly spec_hash: string;
  readonly spec_json: string;
  readonly seconds: number;
  readonly model: string;
  readonly state: JobState;
  readonly fail_kind: FailKind | null;
  readonly attempts: number;
  readonly task_id: string | null;
  readonly task_status: string | null;
  readonly result_url: string | null;
  readonly file: string | null;
  /** The output folder `file` lies in (absolute), or null when recorded by an earlier reel. */
  readonly out_dir: string | null;
  readonly error: string | null;
  readonly created_at: number;
  readonly submitted_at: number | null;
  readonly running_at: number | null;
  readonly finished_at: number | null;
  readonly downloaded_at: number | null;
  readonly updated_at: number;
  /** Size and SHA-256 of the video when reel wrote it, and its stamp then (see migration 6). */
  readonly file_size: number | null;
  readonly file_sha256: string | null;
  readonly file_stamp: string | null;
}

/** The little of a job row that a run starts from. */
export type JobHead = Pick<JobRow, "id" | "state" | "file">;

/** What the journal's check needs of a job version's row (see versionHead). */
export interface VersionHead {
  readonly id: number;
  readonly state: JobState;
  readonly attempts: number;
  readonly file: string | null;
}

/** What reel knows of a video it wrote: its content, and the stamp (see migration 6) it had then. */
export interface VideoFacts {
  readonly size: number;
  readonly sha256: string;
  readonly stamp: string;
}

export interface NewJob {
  readonly key: string;
  readonly manifest: string;
  readonly videoId: string;
  readonly specHash: string;
  readonly specJson: string;
  readonly seconds: number;
  readonly model: string;
}

/** A job row made from a record in the output folder (src/output/recovery.ts): what restoreJobs writes. */
export interface RestoredJob extends NewJob {
  readonly state: JobState;
  readonly failKind: FailKind | null;
  readonly attempts: number;
  readonly taskId: string | null;
  readonly taskStatus: string | null;
  readonly file: string | null;
  readonly outDir: string | null;
  /** What the video held when reel wrote it, as its record says: checked at the next look at it. */
  readonly fileSize: number | null;
  readonly fileSha256: string | null;
  readonly error: string | null;
  readonly createdAt: number;
  readonly submittedAt: number | null;
  readonly finishedAt: number | null;
  readonly downloadedAt: number | null;
}

/** A job version named: its job key and spec hash. */
export interface VersionRef {
  readonly key: string;
  readonly specHash: string;
}

/** A job version's identity in one string (job keys never contain a newline). */
export function versionKey(jobKey: string, specHash: string): string {
  return `${jobKey}\n${specHash}`;
}
