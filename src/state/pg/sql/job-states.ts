// A job's state changes, each one statement (its events row included): the intent of a submission
// (a compare-and-set), its answer, polling, the download, and the way back to pending. Mirrors
// src/state/sql/job-states.ts; where a change is guarded here and not there, it says why.
import { taskStatusFields } from "../../task-status-rule.js";
import { StateFileError } from "../../errors.js";
import type { FailKind, JobRow, VideoFacts } from "../../job-store.js";
import type { PgContext } from "./context.js";

type Fields = Record<string, string | number | null>;

interface SetOptions {
  /** The event of the change, recorded only if a row changed. */
  readonly event?: { readonly kind: string; readonly detail?: string };
  /** More of the WHERE clause (` AND ...`): the compare of a compare-and-set. */
  readonly guard?: string;
  /** Assignments computed from the row itself (`attempts = attempts - 1, `). */
  readonly computed?: string;
}

/**
 * Updates `fields` of job `id`, and records the event of the change, in one statement. Returns the
 * updated_at written and how many rows changed (0 or 1).
 */
async function setJob(
  c: PgContext,
  id: number,
  fields: Fields,
  { event, guard = "", computed = "" }: SetOptions = {},
): Promise<{ updatedAt: number; changed: number }> {
  const now = c.now();
  const values: unknown[] = [id, now, ...Object.values(fields)];
  const sets = Object.keys(fields).map((name, i) => `${name} = $${i + 3}, `);
  const update = `UPDATE jobs SET ${computed}${sets.join("")}updated_at = $2 WHERE id = $1${guard}`;
  let text = update;
  if (event) {
    values.push(event.kind, event.detail ?? null);
    text = `WITH changed AS (${update} RETURNING id)
      INSERT INTO events (at, job_id, kind, detail)
        SELECT $2::bigint, id, $${values.length - 1}::text, $${values.length}::text FROM changed`;
  }
  const { rowCount } = await c.pool.query(text, values);
  return { updatedAt: now, changed: rowCount ?? 0 };
}

/** The job's row is gone: nothing may be sent or recorded for it. */
function jobGone(id: number, what: string): StateFileError {
  return new StateFileError(`job ${id} is not in the state file; ${what}`);
}

export async function markInterruptedSubmissionsUncertain(c: PgContext): Promise<number> {
  const { rowCount } = await c.pool.query(
    `WITH found AS (
       UPDATE jobs SET state = 'uncertain', error = 'the run stopped while this job was being submitted; the service may have received it', updated_at = $2
         WHERE service_id = $1 AND state = 'submitting'
         RETURNING id)
     INSERT INTO events (at, job_id, kind, detail) SELECT $2::bigint, id, 'uncertain', 'interrupted submission' FROM found`,
    [c.serviceId, c.now()],
  );
  return rowCount ?? 0;
}

/**
 * The compare-and-set of a submission's intent, in one statement: of two writers racing for one row,
 * the second waits on the first's row lock, finds the row no longer in a state to claim, and
 * claims nothing. Committed (durably) when the promise resolves.
 */
export async function markSubmitting(c: PgContext, id: number): Promise<number | null> {
  const now = c.now();
  const { rows } = await c.pool.query<{ attempts: number }>(
    `WITH claimed AS (
       UPDATE jobs SET state = 'submitting', attempts = attempts + 1, fail_kind = NULL, error = NULL, task_id = NULL, task_status = NULL, result_url = NULL, updated_at = $2
         WHERE id = $1 AND (state = 'pending' OR (state IN ('Fail', 'Canceled') AND fail_kind = 'local'))
         RETURNING id, attempts),
     noted AS (INSERT INTO events (at, job_id, kind) SELECT $2::bigint, id, 'submitting' FROM claimed)
     SELECT attempts FROM claimed`,
    [id, now],
  );
  if (rows[0]) return rows[0].attempts;
  // No intent, no request: a job whose row is gone must never be paid for unrecorded.
  const { rowCount } = await c.pool.query("SELECT 1 FROM jobs WHERE id = $1", [id]);
  if (rowCount === 0) throw jobGone(id, "it was not submitted");
  return null;
}

/** The attempt counted by markSubmitting, given back: nothing was sent, or nothing was made. */
const GIVE_BACK = "attempts = greatest(0, attempts - 1), ";
const SUBMITTING = " AND state = 'submitting'";

/**
 * Only from `submitting` (SQLite does not check): the caller withdraws its own intent, so this
 * changes nothing it should; but a row another writer moved on (answered, or made uncertain) must
 * not become pending again, or it would be paid for twice.
 */
export async function withdrawSubmitting(c: PgContext, id: number): Promise<void> {
  await setJob(
    c,
    id,
    { state: "pending" },
    { event: { kind: "withdrawn", detail: "not sent" }, guard: SUBMITTING, computed: GIVE_BACK },
  );
}

export async function markSubmitted(c: PgContext, id: number, taskId: string): Promise<void> {
  const now = c.now();
  await setJob(
    c,
    id,
    { state: "submitted", task_id: taskId, task_status: "PreProcessing", submitted_at: now },
    { event: { kind: "submitted", detail: taskId } },
  );
}

export async function markUncertain(c: PgContext, id: number, error: string): Promise<void> {
  await setJob(c, id, { state: "uncertain", error }, { event: { kind: "uncertain", detail: error } });
}

export async function markFailed(c: PgContext, id: number, kind: FailKind, error: string): Promise<void> {
  await setJob(
    c,
    id,
    { state: "Fail", fail_kind: kind, error, finished_at: c.now() },
    { event: { kind: "fail", detail: `${kind}: ${error}` } },
  );
}

/** Only from `submitting`, as withdrawSubmitting and for the same reason. */
export async function markRefused(c: PgContext, id: number, error: string): Promise<void> {
  await setJob(
    c,
    id,
    { state: "pending", fail_kind: null, error },
    { event: { kind: "refused", detail: error }, guard: SUBMITTING, computed: GIVE_BACK },
  );
}

/** A compare-and-set: only from a final state. */
export async function markPending(c: PgContext, id: number, why: string): Promise<boolean> {
  const { changed } = await setJob(
    c,
    id,
    { state: "pending", fail_kind: null, error: null },
    { event: { kind: "pending", detail: why }, guard: " AND state IN ('Fail', 'Canceled', 'uncertain')" },
  );
  return changed === 1;
}

export async function recordTaskStatus(
  c: PgContext,
  id: number,
  status: string,
  resultUrl: string | undefined,
  reason: string | undefined,
): Promise<void> {
  await setJob(c, id, taskStatusFields(status, resultUrl, reason, c.now()), {
    event: { kind: "status", detail: status },
  });
}

export async function recordResultUrl(c: PgContext, id: number, url: string): Promise<void> {
  await setJob(c, id, { result_url: url });
}

export async function markDownloaded(
  c: PgContext,
  row: JobRow,
  file: string,
  outDir: string,
  video?: VideoFacts,
): Promise<JobRow> {
  const changes = {
    file,
    out_dir: outDir,
    downloaded_at: c.now(),
    error: null,
    ...(video && { file_size: video.size, file_sha256: video.sha256, file_stamp: video.stamp }),
  };
  const { updatedAt } = await setJob(c, row.id, changes, { event: { kind: "downloaded", detail: file } });
  return { ...row, ...changes, updated_at: updatedAt };
}

export async function forgetDownload(c: PgContext, row: JobRow): Promise<JobRow> {
  const changes = {
    file: null,
    out_dir: null,
    downloaded_at: null,
    file_size: null,
    file_sha256: null,
    file_stamp: null,
  };
  const { updatedAt } = await setJob(c, row.id, changes);
  return { ...row, ...changes, updated_at: updatedAt };
}

export async function recordJobError(c: PgContext, id: number, error: string): Promise<void> {
  await setJob(c, id, { error });
}

export async function clearJobError(c: PgContext, row: JobRow): Promise<JobRow> {
  const { updatedAt } = await setJob(c, row.id, { error: null });
  return { ...row, error: null, updated_at: updatedAt };
}

export async function recordVideoStamp(c: PgContext, row: JobRow, stamp: string): Promise<JobRow> {
  const { updatedAt } = await setJob(c, row.id, { file_stamp: stamp });
  return { ...row, file_stamp: stamp, updated_at: updatedAt };
}
