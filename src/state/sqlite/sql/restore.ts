// Job rows written back from the records in the output folder (`reel run --rebuild-state`).
import type { JobHead, RestoredJob } from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";
import { JOB_HEAD_SQL } from "./jobs.js";
import { type HeldRow, RESTORED_COLUMNS, restoredDetail, restoredValues } from "../../restore-rule.js";

/** In one transaction; see JobRecords.restoreJobs for which rows are written. */
export function restoreJobs(c: SqlContext, jobs: readonly RestoredJob[]): number {
  return c.turn.write(() => {
    let written = 0;
    for (const job of jobs) {
      const head = sql(c, JOB_HEAD_SQL).get(c.serviceId, job.key, job.specHash) as JobHead | undefined;
      const held = head
        ? (sql(c, "SELECT state, spec_json, attempts FROM jobs WHERE id = ?").get(head.id) as HeldRow)
        : undefined;
      const values = restoredValues(c.serviceId, held, job, c.now());
      if (!values) continue;
      if (head) sql(c, "DELETE FROM jobs WHERE id = ?").run(head.id);
      // The row keeps its id, so that an id held elsewhere (the journal, a log) still names it.
      const { lastInsertRowid } = sql(
        c,
        `INSERT INTO jobs (${head ? "id, " : ""}${RESTORED_COLUMNS})
           VALUES (${head ? "?, " : ""}${values.map(() => "?").join(", ")})`,
      ).run(...(head ? [head.id, ...values] : values));
      c.turn.event(Number(lastInsertRowid), "restored", restoredDetail(job));
      written++;
    }
    return written;
  });
}
