// The store's events rows read as the stream. The store keeps one row per event (its `events` table,
// written in the transaction of the change it records): the kinds the state changes have always
// written, and, for events that are no state change (a run started, a job queued), the stream's own
// type with its fields as JSON in `detail`. This is the one place that maps a row to a line.
import { describeNamedNotice } from "../budget/messages.js";
import { BUDGET_NOTICE_KIND, type NamedBudgetNotice } from "../state/named-budget.js";
import type { StoredEvent } from "../state/stored-event.js";
import { EVENTS_VERSION, type EventField, type EventType, isEventType, type StreamEvent } from "./types.js";

/** Kinds the state changes write: their type, and the field their detail fills. */
const STATE_KINDS: Readonly<Record<string, { type: EventType; field?: EventField }>> = {
  submitting: { type: "job.submitting" },
  submitted: { type: "job.submitted", field: "taskId" },
  // The answer of a runner taken over while its request was on the wire: the task id it learned.
  "late-answer": { type: "job.submitted", field: "taskId" },
  status: { type: "job.status", field: "status" },
  downloaded: { type: "job.downloaded", field: "file" },
  fail: { type: "job.failed", field: "reason" },
  uncertain: { type: "job.uncertain", field: "reason" },
  refused: { type: "job.refused", field: "reason" },
  withdrawn: { type: "job.withdrawn", field: "reason" },
  pending: { type: "job.reset", field: "reason" },
  forgotten: { type: "job.forgotten", field: "reason" },
  restored: { type: "job.restored", field: "reason" },
  retake: { type: "job.retake-queued", field: "reason" },
  "uploads-interrupted": { type: "uploads.interrupted", field: "count" },
};

const NUMBER_FIELDS: ReadonlySet<EventField> = new Set(["count", "jobs", "exitCode", "attempt"]);

/** The line of `row`; undefined for a row no type stands for (none today: kept for rows of later reels). */
export function streamEventOf(row: StoredEvent): StreamEvent | undefined {
  let type: EventType;
  let fields: Record<string, unknown> = {};
  const state = STATE_KINDS[row.kind];
  if (state) {
    type = state.type;
    if (state.field && row.detail !== null) {
      fields[state.field] = NUMBER_FIELDS.has(state.field) ? Number(row.detail) : row.detail;
    }
    // A retake's detail starts with the new take's key ("key: a retake of ...").
    if (row.kind === "retake" && row.detail) fields.take = row.detail.split(":")[0];
  } else if (row.kind === BUDGET_NOTICE_KIND && row.detail) {
    type = "budget.threshold";
    const notice = JSON.parse(row.detail) as NamedBudgetNotice;
    fields = { percent: notice.percent, budget: notice.budget, reason: describeNamedNotice(notice) };
  } else if (isEventType(row.kind)) {
    type = row.kind;
    if (row.detail) fields = JSON.parse(row.detail) as Record<string, unknown>;
  } else {
    return undefined;
  }
  return {
    v: EVENTS_VERSION,
    seq: row.id,
    time: new Date(row.at).toISOString(),
    type,
    runner: row.runner ?? "",
    ...(row.jobKey !== null && { job: row.jobKey }),
    ...(row.taskId !== null && { taskId: row.taskId }),
    ...fields,
  } as StreamEvent;
}
