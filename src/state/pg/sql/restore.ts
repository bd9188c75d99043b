// Job rows written back from the records in the output folder (`reel run --rebuild-state`). Mirrors
// src/state/sqlite/sql/restore.ts: the one write of several statements, so one transaction.
import type { RestoredJob } from "../../job-store.js";
import { RESTORED_COLUMNS, restoredDetail, restoredValues } from "../../restore-rule.js";
import { inTransaction, type PgContext, toNumber } from "./context.js";

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
      const values = restoredValues(c.serviceId, held, job, c.now());
      if (!values) continue;
      if (held) await client.query("DELETE FROM jobs WHERE id = $1", [held.id]);
      // The row keeps its id, so that an id held elsewhere (the journal, a log) still names it.
      const all = held ? [held.id, ...values] : values;
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO jobs (${held ? "id, " : ""}${RESTORED_COLUMNS}) VALUES (${all.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`,
        all,
      );
      // Named by its key and its runner, as every other job event is.
      await client.query(
        "INSERT INTO events (at, job_id, kind, detail, job_key, runner_id) VALUES ($1, $2, 'restored', $3, $4, $5)",
        [c.now(), toNumber(inserted.rows[0]!.id), restoredDetail(job), job.key, c.eventRunnerId ?? null],
      );
      written++;
    }
    return written;
  });
}
