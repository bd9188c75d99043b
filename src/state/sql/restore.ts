// Job rows written back from the records in the output folder (`reel run --rebuild-state`).
import type { JobHead } from "../job-store.js";
import type { RestoredJob } from "../job-store.js";
import { type SqlContext, sql } from "./context.js";
import { JOB_HEAD_SQL } from "./jobs.js";

/** In one transaction; see JobRecords.restoreJobs for which rows are written. */
export function restoreJobs(c: SqlContext, jobs: readonly RestoredJob[]): number {
  return c.turn.write(() => {
    let written = 0;
    for (const job of jobs) {
      const head = sql(c, JOB_HEAD_SQL).get(c.serviceId, job.key, job.specHash) as JobHead | undefined;
      const held = head
        ? (sql(c, "SELECT spec_json, attempts FROM jobs WHERE id = ?").get(head.id) as {
            spec_json: string;
            attempts: number;
          })
        : undefined;
      // An uncertain row (a submission whose answer the state lost) takes the task id of that same
      // attempt that the journal kept.
      const answered = head?.state === "uncertain" && job.taskId !== null && job.attempts >= held!.attempts;
      if (head && head.state !== "pending" && head.state !== "submitting" && !answered) continue;
      // The spec the row holds, when the record has none (results.jsonl and the journal carry none).
      const specJson = held && job.specJson === "null" ? held.spec_json : job.specJson;
      if (head) sql(c, "DELETE FROM jobs WHERE id = ?").run(head.id);
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
      const { lastInsertRowid } = sql(
        c,
        `INSERT INTO jobs (${head ? "id, " : ""}service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, fail_kind, attempts, task_id, task_status, file, out_dir, error, created_at, submitted_at, finished_at, downloaded_at, updated_at)
           VALUES (${head ? "?, " : ""}${values.map(() => "?").join(", ")})`,
      ).run(...(head ? [head.id, ...values] : values));
      c.turn.event(
        Number(lastInsertRowid),
        "restored",
        `${job.state}${job.taskId ? ` (task ${job.taskId})` : ""}`,
      );
      written++;
    }
    return written;
  });
}
