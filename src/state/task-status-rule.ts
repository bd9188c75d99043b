// What a task status seen by polling writes on its job's row: one rule for both backends (the
// state file's sql/job-states.ts and PostgreSQL's pg/sql/job-states.ts), so that they record the
// same final states, times and default reasons.

/** The columns recordTaskStatus sets for `status` (see JobRecords.recordTaskStatus). */
export function taskStatusFields(
  status: string,
  resultUrl: string | undefined,
  reason: string | undefined,
  now: number,
): Record<string, string | number> {
  const fields: Record<string, string | number> = { task_status: status };
  if (status === "Running") fields.running_at = now;
  if (resultUrl !== undefined) fields.result_url = resultUrl;
  if (status === "Success" || status === "Fail" || status === "Canceled") {
    fields.state = status;
    fields.finished_at = now;
    if (status === "Fail") {
      fields.fail_kind = "task";
      fields.error = reason ?? "the service reported Fail without a reason";
    }
    if (status === "Canceled") fields.error = reason ?? "the task was canceled on the service";
  }
  return fields;
}
