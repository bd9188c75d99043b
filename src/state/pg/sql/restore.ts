// Job rows written back from the records in the output folder (`reel run --rebuild-state`). Mirrors
// src/state/sql/restore.ts: the one write of several statements, so one transaction.
import type { RestoredJob } from "../../job-store.js";
import { inTransaction, type PgContext, toNumber } from "./context.js";

const COLUMNS =
  "service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, file, out_dir, error, created_at, submitted_at, finished_at, downloaded_at, updated_at";

/** See JobRecords.restoreJobs for which rows are written. */
export async function restoreJobs(c: PgContext, jobs: readonly RestoredJob[]): Promise<number> {
  return inTransaction(c, async (client) => {
    let written = 0;
    for (const job of jobs) {
      // FOR UPDATE: the row is judged and replaced as one, whatever another runner does meanwhile.
      const { rows } = await client.query<{ id: string; state: string; spec_json: string; attempts: number }>(
        "SELECT id, state, spec_json, attempts FROM jobs WHERE service_id = $1 AND job_key = $2 AND spec_hash = $3 FOR UPDATE",
        [c.serviceId, job.key, job.specHash],
      );
      const held = rows[0];
      // An uncertain row (a submission whose answer the state lost) takes the task id of that same
      // attempt that the journal kept.
      const answered = held?.state === "uncertain" && job.taskId !== null && job.attempts >= held.attempts;
      if (held && held.state !== "pending" && held.state !== "submitting" && !answered) continue;
      // The spec the row holds, when the record has none (results.jsonl and the journal carry none).
      const specJson = held && job.specJson === "null" ? held.spec_json : job.specJson;
      if (held) await client.query("DELETE FROM jobs WHERE id = $1", [held.id]);
      const values = [
        c.serviceId,
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
        job.error,
        job.createdAt,
        job.submittedAt,
        job.finishedAt,
        job.downloadedAt,
        c.now(),
      ];
      // The row keeps its id, so that an id held elsewhere (the journal, a log) still names it.
      const all = held ? [held.id, ...values] : values;
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO jobs (${held ? "id, " : ""}${COLUMNS}) VALUES (${all.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`,
        all,
      );
      await client.query("INSERT INTO events (at, job_id, kind, detail) VALUES ($1, $2, 'restored', $3)", [
        c.now(),
        toNumber(inserted.rows[0]!.id),
        `${job.state}${job.taskId ? ` (task ${job.taskId})` : ""}`,
      ]);
      written++;
    }
    return written;
  });
}
