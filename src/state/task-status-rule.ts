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

/**
 * The event a final status that is no success also records, after its `status` event: the stream's
 * `job.failed`, with the reason the row keeps (a consumer told of failures needs the why).
 */
export function taskEndEvent(
  fields: Record<string, string | number>,
): { kind: "fail"; detail: string } | undefined {
  if (fields.state === "Fail") return { kind: "fail", detail: `task: ${fields.error}` };
  if (fields.state === "Canceled") return { kind: "fail", detail: `canceled: ${fields.error}` };
  return undefined;
}
