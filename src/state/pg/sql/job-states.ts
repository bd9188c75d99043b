// A job's state changes, each one statement (its events row included): the way back to pending,
// the failures, polling, the download. The intent of a submission and its answer are the fleet's
// (fleet.ts). Mirrors src/state/sqlite/sql/job-states.ts; where a change is guarded here and not there, it says why.
import { taskEndEvent, taskStatusFields } from "../../task-status-rule.js";
import type { FailKind, JobRow, VideoFacts } from "../../job-store.js";
import type { PgContext } from "./context.js";
import { type FleetContext, leaseLostError } from "./fleet.js";
import { CLAIMABLE, GIVE_BACK, RETRYABLE } from "../../job-state-rule.js";
import { DOWNLOAD_FORGOTTEN, downloadedFields } from "../../download-rule.js";

type Fields = Record<string, string | number | null>;

interface SetOptions {
  /** The event of the change, recorded only if a row changed. */
  readonly event?: { readonly kind: string; readonly detail?: string };
  /** A second event of the same change, after the first (a task that ended Fail: its job.failed). */
  readonly then?: { readonly kind: string; readonly detail?: string };
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
  { event, then, guard = "", computed = "" }: SetOptions = {},
): Promise<{ updatedAt: number; changed: number }> {
  const now = c.now();
  const values: unknown[] = [id, now, ...Object.values(fields)];
  const sets = Object.keys(fields).map((name, i) => `${name} = $${i + 3}, `);
  const update = `UPDATE jobs SET ${computed}${sets.join("")}updated_at = $2 WHERE id = $1${guard}`;
  let text = update;
  if (event) {
    values.push(event.kind, event.detail ?? null);
    // With the job's key and task id as they are now, and the runner that changed it (src/events).
    values.push(c.eventRunnerId ?? null);
    const n = values.length;
    const row = (kind: number, detail: number): string =>
      `SELECT $2::bigint, id, $${kind}::text, $${detail}::text, job_key, task_id, $${n}::bigint FROM changed`;
    if (then) values.push(then.kind, then.detail ?? null);
    text = `WITH changed AS (${update} RETURNING id, job_key, task_id)
      INSERT INTO events (at, job_id, kind, detail, job_key, task_id, runner_id)
        ${row(n - 2, n - 1)}${then ? ` UNION ALL ${row(n + 1, n + 2)}` : ""}`;
  }
  const { rowCount } = await c.pool.query(text, values);
  return { updatedAt: now, changed: rowCount ?? 0 };
}

const SUBMITTING = " AND state = 'submitting'";

/**
 * Only this runner's own intent (SQLite does not check): a row another writer moved on (answered,
 * or claimed again) must not become pending again, or it would be paid for twice. Its own intent
 * made uncertain by a takeover (this runner was paused past its lease before sending) is pending
 * again too: the runner knows nothing was sent.
 */
export async function withdrawSubmitting(c: FleetContext, id: number): Promise<void> {
  await setJob(
    c,
    id,
    { state: "pending" },
    {
      event: { kind: "withdrawn", detail: "not sent" },
      guard: ` AND state IN ('submitting', 'uncertain') AND runner_id = ${c.runnerId}`,
      computed: `${GIVE_BACK}, `,
    },
  );
}

/**
 * What a runner may mark on its own account: a job no one has claimed (a failure before anything was
 * sent), or its own intent. Another runner may have claimed the job meanwhile (its submission, its
 * task, its video): that is never written over by this runner's view of it.
 */
function mineOrUnclaimed(c: FleetContext): string {
  return ` AND (${CLAIMABLE} OR (state = 'submitting' AND runner_id = ${c.runnerId}))`;
}

export async function markUncertain(c: FleetContext, id: number, error: string): Promise<void> {
  await setJob(
    c,
    id,
    { state: "uncertain", fail_kind: null, error },
    { event: { kind: "uncertain", detail: error }, guard: mineOrUnclaimed(c) },
  );
}

/** Only on a job no one claimed: a speech doubt comes before this runner's claim. */
export async function markSpeechDoubt(c: PgContext, id: number, error: string): Promise<void> {
  await setJob(
    c,
    id,
    { state: "uncertain", fail_kind: "speech", error },
    {
      event: { kind: "uncertain", detail: `speech: ${error}` },
      guard: ` AND ${CLAIMABLE}`,
    },
  );
}

/** A local failure only on a job no one claimed; a rejection only on this runner's own intent. */
export async function markFailed(c: FleetContext, id: number, kind: FailKind, error: string): Promise<void> {
  await setJob(
    c,
    id,
    { state: "Fail", fail_kind: kind, error, finished_at: c.now() },
    {
      event: { kind: "fail", detail: `${kind}: ${error}` },
      ...(kind === "task" ? { guard: ` AND runner_id = ${c.runnerId}` } : { guard: mineOrUnclaimed(c) }),
    },
  );
}

/** Only from `submitting`, as withdrawSubmitting and for the same reason. */
export async function markRefused(c: PgContext, id: number, error: string): Promise<void> {
  await setJob(
    c,
    id,
    { state: "pending", fail_kind: null, error },
    { event: { kind: "refused", detail: error }, guard: SUBMITTING, computed: `${GIVE_BACK}, ` },
  );
}

/** A compare-and-set: only from a final state. */
export async function markPending(c: PgContext, id: number, why: string): Promise<boolean> {
  const { changed } = await setJob(
    c,
    id,
    { state: "pending", fail_kind: null, error: null },
    { event: { kind: "pending", detail: why }, guard: ` AND ${RETRYABLE}` },
  );
  return changed === 1;
}

/**
 * Fenced: by the runner that follows the task only. Another runner holds it only once this one was
 * taken over, which then stops (LeaseLostError) rather than follow a task that is not its own.
 */
export async function recordTaskStatus(
  c: FleetContext,
  id: number,
  status: string,
  resultUrl: string | undefined,
  reason: string | undefined,
): Promise<void> {
  const fields = taskStatusFields(status, resultUrl, reason, c.now());
  const ended = taskEndEvent(fields);
  const { changed } = await setJob(c, id, fields, {
    event: { kind: "status", detail: status },
    ...(ended && { then: ended }),
    guard: ` AND runner_id = ${c.runnerId}`,
  });
  if (changed === 0 && (await c.pool.query("SELECT 1 FROM jobs WHERE id = $1", [id])).rowCount !== 0) {
    throw await leaseLostError(c, `It no longer follows the task of job ${id}.`);
  }
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
  const changes = downloadedFields(file, outDir, c.now(), video);
  const { updatedAt } = await setJob(c, row.id, changes, { event: { kind: "downloaded", detail: file } });
  return { ...row, ...changes, updated_at: updatedAt };
}

export async function forgetDownload(c: PgContext, row: JobRow): Promise<JobRow> {
  const { updatedAt } = await setJob(c, row.id, DOWNLOAD_FORGOTTEN);
  return { ...row, ...DOWNLOAD_FORGOTTEN, updated_at: updatedAt };
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
