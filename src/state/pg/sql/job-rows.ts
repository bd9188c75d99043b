// Whole job rows, and the one mapper that turns what pg returns into a JobRow.
import type { JobRow } from "../../job-store.js";
import { toNumber, toNumberOrNull } from "./context.js";

/** The columns of a JobRow, in a SELECT list (prefix them with `jobs.` through `JOB_COLUMNS_OF`). */
export const JOB_COLUMNS =
  "id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, result_url, file, out_dir, error, created_at, submitted_at, running_at, finished_at, downloaded_at, updated_at, file_size, file_sha256, file_stamp";

/** JOB_COLUMNS of the table (or alias) `table`. */
export function jobColumnsOf(table: string): string {
  return JOB_COLUMNS.split(", ")
    .map((column) => `${table}.${column}`)
    .join(", ");
}

/**
 * A row of JOB_COLUMNS as a JobRow. pg returns bigint columns (ids, times, sizes) as strings, so
 * that no int8 loses precision; every one reel writes is a safe integer, parsed here.
 */
export function jobRowOf(r: Record<string, unknown>): JobRow {
  return {
    id: toNumber(r.id),
    job_key: r.job_key as string,
    manifest: r.manifest as string,
    video_id: r.video_id as string,
    spec_hash: r.spec_hash as string,
    spec_json: r.spec_json as string,
    seconds: r.seconds as number,
    model: r.model as string,
    state: r.state as JobRow["state"],
    fail_kind: r.fail_kind as JobRow["fail_kind"],
    attempts: r.attempts as number,
    task_id: r.task_id as string | null,
    task_status: r.task_status as string | null,
    result_url: r.result_url as string | null,
    file: r.file as string | null,
    out_dir: r.out_dir as string | null,
    error: r.error as string | null,
    created_at: toNumber(r.created_at),
    submitted_at: toNumberOrNull(r.submitted_at),
    running_at: toNumberOrNull(r.running_at),
    finished_at: toNumberOrNull(r.finished_at),
    downloaded_at: toNumberOrNull(r.downloaded_at),
    updated_at: toNumber(r.updated_at),
    file_size: toNumberOrNull(r.file_size),
    file_sha256: r.file_sha256 as string | null,
    file_stamp: r.file_stamp as string | null,
  };
}
