// Each job's record (the README, "Output layout"): `OUT/<manifest>/<id>.json` beside its video, the
// job as `results.jsonl` shows it plus the spec that was sent and what the video held.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { type DecisionFields, decisionFieldsOf } from "./decision-fields.js";
import type { DecisionRow, JobRow } from "../state/job-store.js";
import { writeSmallFileAtomicSync } from "./atomic-write.js";
import { isoTime } from "./iso-time.js";
import { recordFile } from "./layout.js";
import { readStoredSpec } from "../stored-spec.js";

export interface JobResult extends DecisionFields {
  readonly manifest: string;
  readonly id: string;
  /**
   * Success, Fail, Canceled, uncertain, or a non-final state: `unsent` (nothing sent, nothing paid),
   * `submitting` (sent, answer not recorded yet), or the task's own PreProcessing, Pending, Running.
   */
  readonly status: string;
  readonly taskId: string | null;
  /** Relative to OUT, or null. */
  readonly file: string | null;
  readonly error: string | null;
  readonly attempts: number;
  readonly model: string;
  readonly seconds: number;
  readonly specHash: string;
  readonly createdAt: string;
  readonly submittedAt: string | null;
  readonly finishedAt: string | null;
  readonly downloadedAt: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

/** A job's status as every output shows it (JobResult.status). */
export function statusOf(row: Pick<JobRow, "state" | "task_status">): string {
  // reel's own "pending" is shown as "unsent": the service's "Pending" is a paid task, and the two
  // must not differ by a capital letter only.
  return row.state === "submitted"
    ? (row.task_status ?? "PreProcessing")
    : row.state === "pending"
      ? "unsent"
      : row.state;
}

/**
 * A job as its record, results.jsonl, index.html and `reel status` show it; `decision`: the latest
 * decision of its version, if any (the store's latestDecisions).
 */
export function resultOf(row: JobRow, decision?: DecisionRow): JobResult {
  return {
    manifest: row.manifest,
    id: row.video_id,
    status: statusOf(row),
    taskId: row.task_id,
    file: row.file,
    error: row.error,
    attempts: row.attempts,
    model: row.model,
    seconds: row.seconds,
    specHash: row.spec_hash,
    createdAt: iso(row.created_at)!,
    submittedAt: iso(row.submitted_at),
    finishedAt: iso(row.finished_at),
    downloadedAt: iso(row.downloaded_at),
    ...decisionFieldsOf(decision),
  };
}

/**
 * `<id>.json`, or `<id>.<hash>.json` for a version of the video that is no longer the manifest's
 * (`superseded`): its record sits beside its `<id>.<hash>.mp4` and never replaces the current one's.
 */
const recordPath = (outDir: string, row: JobRow, superseded: boolean): string =>
  join(outDir, recordFile(row.manifest, row.video_id, row.spec_hash, superseded));

/**
 * `OUT/<manifest>/<id>.json`: the job's record, with the spec that was sent. Not fsync'ed (one per
 * job would cost more than the rest of the job): it is made again from the state file whenever a
 * run finds it missing or emptied by a power cut (ensureJobRecord).
 */
export function writeJobRecord(
  outDir: string,
  row: JobRow,
  superseded = false,
  decision?: DecisionRow,
): void {
  // What the video held when reel wrote it: a script (or a person with sha256sum) can check it.
  const record = {
    ...resultOf(row, decision),
    size: row.file_size,
    sha256: row.file_sha256,
    spec: readStoredSpec(row.spec_json).sent,
  };
  writeSmallFileAtomicSync(recordPath(outDir, row, superseded), `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * Writes the job's record again if it is missing, empty or cut short (a power cut, an editor): a
 * record reel wrote ends with "}\n". Two bytes read, not the whole file: a rerun checks every job.
 */
export function ensureJobRecord(outDir: string, row: JobRow): void {
  const path = recordPath(outDir, row, false);
  try {
    const { size } = statSync(path);
    if (size >= 2) {
      const fd = openSync(path, "r");
      try {
        const tail = Buffer.alloc(2);
        readSync(fd, tail, 0, 2, size - 2);
        if (tail.toString("latin1") === "}\n") return;
      } finally {
        closeSync(fd);
      }
    }
  } catch {
    // missing or unreadable: write it
  }
  writeJobRecord(outDir, row);
}
