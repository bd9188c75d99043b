// A job's state changes: the intent of a submission (a compare-and-set, durable before the request
// leaves), its answer, polling, the download, and the way back to pending. Each is one write of the
// turn (turn.ts), with its event.
import { taskEndEvent, taskStatusFields } from "../../task-status-rule.js";
import type { FailKind, JobRow, VideoCharge, VideoFacts } from "../../job-store.js";
import { chargeVideo } from "./budget.js";
import { noticingRefusals, spendFromBudget } from "./named-budgets.js";
import { JobGoneError } from "../../../errors/state.js";
import { type SqlContext, sql } from "./context.js";
import { findJobById } from "./jobs.js";
import { CLAIM, CLAIMABLE, GIVE_BACK, RETRYABLE } from "../../job-state-rule.js";
import { DOWNLOAD_FORGOTTEN, downloadedFields } from "../../download-rule.js";

/** Updates `fields` of job `id`; returns the updated_at it recorded. */
function setJob(c: SqlContext, id: number, fields: Record<string, string | number | null>): number {
  // Positional parameters: binding by name costs more, on a write made several times per job.
  const names = Object.keys(fields);
  const now = c.now();
  sql(c, `UPDATE jobs SET ${names.map((n) => `${n} = ?`).join(", ")}, updated_at = ? WHERE id = ?`).run(
    ...Object.values(fields),
    now,
    id,
  );
  return now;
}

export function markInterruptedSubmissionsUncertain(c: SqlContext): number {
  return c.turn.write(() => {
    const rows = sql(c, "SELECT id FROM jobs WHERE service_id = ? AND state = 'submitting'").all(
      c.serviceId,
    ) as { id: number }[];
    for (const { id } of rows) {
      setJob(c, id, {
        state: "uncertain",
        error: "the run stopped while this job was being submitted; the service may have received it",
      });
      c.turn.event(id, "uncertain", "interrupted submission");
    }
    return rows.length;
  });
}

/** Committed with synchronous=FULL, and awaited: the request leaves only once the intent is on disk. */
export async function markSubmitting(
  c: SqlContext,
  id: number,
  charge: VideoCharge | undefined,
): Promise<number | null> {
  // With a charge, two statements: in a savepoint, so a failing second undoes the claim too.
  const write = noticingRefusals(c, charge ? c.turn.write.bind(c.turn) : c.turn.writeStatement.bind(c.turn));
  const attempt = write(() => {
    const claimed = sql(
      c,
      `UPDATE jobs SET ${CLAIM}, updated_at = ?
         WHERE id = ? AND ${CLAIMABLE}
         RETURNING attempts`,
    ).get(c.now(), id) as { attempts: number } | undefined;
    if (claimed) {
      if (charge) chargeVideo(c, id, claimed.attempts, charge);
      // A named budget's check, in the claim's transaction: no room undoes the claim (it throws).
      if (charge?.named) spendFromBudget(c, charge.named, { jobId: id, attempt: claimed.attempts });
      c.turn.event(id, "submitting");
      return claimed.attempts;
    }
    // No intent, no request: a job whose row is gone must never be paid for unrecorded.
    if (!findJobById(c, id))
      throw new JobGoneError(`job ${id} is not in the state file; it was not submitted`);
    return null;
  }, true);
  if (attempt !== null) await c.turn.durable();
  return attempt;
}

export function withdrawSubmitting(c: SqlContext, id: number): void {
  c.turn.write(() => {
    sql(c, `UPDATE jobs SET ${GIVE_BACK} WHERE id = ?`).run(id);
    setJob(c, id, { state: "pending" });
    c.turn.event(id, "withdrawn", "not sent");
  });
}

/** Not forced to disk (see JobRecords.markSubmitted). */
export function markSubmitted(c: SqlContext, id: number, taskId: string): string | undefined {
  // Synchronous: no other write comes between the look-up and the write.
  const holder = sql(
    c,
    "SELECT job_key FROM jobs WHERE service_id = ? AND task_id = ? AND id != ? LIMIT 1",
  ).get(c.serviceId, taskId, id) as { job_key: string } | undefined;
  if (holder) return holder.job_key;
  c.turn.writeStatement(() => {
    const now = c.now();
    setJob(c, id, {
      state: "submitted",
      task_id: taskId,
      task_status: "PreProcessing",
      submitted_at: now,
    });
    c.turn.event(id, "submitted", taskId);
  });
  return undefined;
}

export function markUncertain(c: SqlContext, id: number, error: string): void {
  c.turn.writeStatement(() => {
    setJob(c, id, { state: "uncertain", fail_kind: null, error });
    c.turn.event(id, "uncertain", error);
  });
}

/** A compare-and-set: only from a state no submission was claimed in (see JobRecords). */
export function markSpeechDoubt(c: SqlContext, id: number, error: string): void {
  c.turn.writeStatement(() => {
    const changed = sql(
      c,
      `UPDATE jobs SET state = 'uncertain', fail_kind = 'speech', error = ?, updated_at = ?
         WHERE id = ? AND ${CLAIMABLE}`,
    ).run(error, c.now(), id).changes;
    if (changed === 1) c.turn.event(id, "uncertain", `speech: ${error}`);
  });
}

export function markFailed(c: SqlContext, id: number, kind: FailKind, error: string): void {
  c.turn.writeStatement(() => {
    setJob(c, id, { state: "Fail", fail_kind: kind, error, finished_at: c.now() });
    c.turn.event(id, "fail", `${kind}: ${error}`);
  });
}

export function markRefused(c: SqlContext, id: number, error: string): void {
  c.turn.write(() => {
    sql(c, `UPDATE jobs SET ${GIVE_BACK} WHERE id = ?`).run(id);
    setJob(c, id, { state: "pending", fail_kind: null, error });
    c.turn.event(id, "refused", error);
  });
}

export function markPending(c: SqlContext, id: number, why: string): boolean {
  return c.turn.writeStatement(() => {
    const changed = sql(
      c,
      `UPDATE jobs SET state = 'pending', fail_kind = NULL, error = NULL, updated_at = ? WHERE id = ? AND ${RETRYABLE}`,
    ).run(c.now(), id).changes;
    if (changed === 1) c.turn.event(id, "pending", why);
    return changed === 1;
  });
}

export function recordTaskStatus(
  c: SqlContext,
  id: number,
  status: string,
  resultUrl: string | undefined,
  reason: string | undefined,
): void {
  c.turn.writeStatement(() => {
    const fields = taskStatusFields(status, resultUrl, reason, c.now());
    setJob(c, id, fields);
    c.turn.event(id, "status", status);
    const ended = taskEndEvent(fields);
    if (ended) c.turn.event(id, ended.kind, ended.detail);
  });
}

export function recordResultUrl(c: SqlContext, id: number, url: string): void {
  c.turn.writeStatement(() => setJob(c, id, { result_url: url }));
}

export function markDownloaded(
  c: SqlContext,
  row: JobRow,
  file: string,
  outDir: string,
  video?: VideoFacts,
): JobRow {
  return c.turn.writeStatement(() => {
    const changes = downloadedFields(file, outDir, c.now(), video);
    const updatedAt = setJob(c, row.id, changes);
    c.turn.event(row.id, "downloaded", file);
    return { ...row, ...changes, updated_at: updatedAt };
  });
}

export function forgetDownload(c: SqlContext, row: JobRow): JobRow {
  return c.turn.writeStatement(() => ({
    ...row,
    ...DOWNLOAD_FORGOTTEN,
    updated_at: setJob(c, row.id, DOWNLOAD_FORGOTTEN),
  }));
}

export function recordJobError(c: SqlContext, id: number, error: string): void {
  c.turn.writeStatement(() => setJob(c, id, { error }));
}

export function clearJobError(c: SqlContext, row: JobRow): JobRow {
  return c.turn.writeStatement(() => ({
    ...row,
    error: null,
    updated_at: setJob(c, row.id, { error: null }),
  }));
}

export function recordVideoStamp(c: SqlContext, row: JobRow, stamp: string): JobRow {
  return c.turn.writeStatement(() => ({
    ...row,
    file_stamp: stamp,
    updated_at: setJob(c, row.id, { file_stamp: stamp }),
  }));
}
