// Whole job rows, read as arrays (see jobRowOf).
import type Database from "better-sqlite3";
import type { JobRow } from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";

const JOB_COLUMNS =
  "id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, result_url, file, error, created_at, submitted_at, running_at, finished_at, downloaded_at, updated_at, out_dir, file_size, file_sha256, file_stamp";

/** A query of whole job rows, read as arrays: map them with jobRowOf. */
export function jobRows(c: SqlContext, where: string): Database.Statement {
  return sql(c, `SELECT ${JOB_COLUMNS} FROM jobs ${where}`, true);
}

/**
 * A job row as an object of fixed shape. better-sqlite3 builds a row object property by property,
 * which makes a dictionary-mode object of ~1.6 KB for these 26 columns and costs ~20 µs; a run reads
 * a row several times per job, so rows are read as arrays and built here (~250 B, ~5 µs).
 */
export function jobRowOf(v: unknown[]): JobRow {
  return {
    id: v[0] as JobRow["id"],
    job_key: v[1] as JobRow["job_key"],
    manifest: v[2] as JobRow["manifest"],
    video_id: v[3] as JobRow["video_id"],
    spec_hash: v[4] as JobRow["spec_hash"],
    spec_json: v[5] as JobRow["spec_json"],
    seconds: v[6] as JobRow["seconds"],
    model: v[7] as JobRow["model"],
    state: v[8] as JobRow["state"],
    fail_kind: v[9] as JobRow["fail_kind"],
    attempts: v[10] as JobRow["attempts"],
    task_id: v[11] as JobRow["task_id"],
    task_status: v[12] as JobRow["task_status"],
    result_url: v[13] as JobRow["result_url"],
    file: v[14] as JobRow["file"],
    error: v[15] as JobRow["error"],
    created_at: v[16] as JobRow["created_at"],
    submitted_at: v[17] as JobRow["submitted_at"],
    running_at: v[18] as JobRow["running_at"],
    finished_at: v[19] as JobRow["finished_at"],
    downloaded_at: v[20] as JobRow["downloaded_at"],
    updated_at: v[21] as JobRow["updated_at"],
    out_dir: v[22] as JobRow["out_dir"],
    file_size: v[23] as JobRow["file_size"],
    file_sha256: v[24] as JobRow["file_sha256"],
    file_stamp: v[25] as JobRow["file_stamp"],
  };
}
