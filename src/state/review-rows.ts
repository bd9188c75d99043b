// The decisions and retakes tables as both backends (sqlite/sql/, pg/sql/) read and write them: the
// columns of a row read back and its decoder, what a retake adds, and the events it records, spelled
// once. Plain SQL that SQLite and PostgreSQL read alike; each backend adds its own placeholders.
import type { DecisionRow, NewDecision, NewJob, RetakeRequest, RetakeRow } from "./job-store.js";
import { RETAKE_STATE } from "./job-state-rule.js";
import { toNumber, toNumberOrNull } from "./stored-number.js";

// Each column is selected under its field's name (in the order of the row's type), so that a row
// read back is the record but for its integers, which pg hands back as strings.

/** A decision with its service's address: `SELECT ${DECISION_COLUMNS} ${DECISIONS_FROM}`. */
export const DECISION_COLUMNS = `decisions.id, services.base_url AS "baseUrl", decisions.job_key AS "key",
  decisions.spec_hash AS "specHash", decisions.decision, decisions.reviewer, decisions.note,
  decisions.decided_at AS "decidedAt"`;
export const DECISIONS_FROM = "FROM decisions JOIN services ON services.id = decisions.service_id";

/** A row of DECISION_COLUMNS as a DecisionRow. */
export function decisionOf(r: Record<string, unknown>): DecisionRow {
  return { ...r, id: toNumber(r.id), decidedAt: toNumber(r.decidedAt) } as DecisionRow;
}

/** The retakes with their service's address and their state (RetakeRow): add a WHERE clause. */
export const SELECT_RETAKES = `SELECT retakes.id, services.base_url AS "baseUrl", retakes.job_key AS "key",
    retakes.manifest, retakes.video_id AS "videoId", retakes.spec_hash AS "specHash",
    retakes.from_key AS "fromKey", retakes.from_spec_hash AS "fromSpecHash", retakes.reviewer, retakes.note,
    retakes.queued_at AS "queuedAt", retakes.withdrawn_at AS "withdrawnAt", ${RETAKE_STATE} AS state
  FROM retakes JOIN services ON services.id = retakes.service_id
  LEFT JOIN jobs ON jobs.service_id = retakes.service_id AND jobs.job_key = retakes.job_key
    AND jobs.spec_hash = retakes.spec_hash`;

/** A row of SELECT_RETAKES as a RetakeRow. */
export function retakeOf(r: Record<string, unknown>): RetakeRow {
  return {
    ...r,
    id: toNumber(r.id),
    queuedAt: toNumber(r.queuedAt),
    withdrawnAt: toNumberOrNull(r.withdrawnAt),
  } as RetakeRow;
}

/** The columns a retake is inserted with, in the order of RetakeWrites.values. */
export const NEW_RETAKE_COLUMNS =
  "service_id, job_key, manifest, video_id, spec_hash, from_key, from_spec_hash, reviewer, note, queued_at";

/** What queueing a retake writes beside its new take's job, in this order. */
export interface RetakeWrites {
  /** The decision on the take retaken: rejected, by the reviewer, with the note. */
  readonly rejection: NewDecision;
  /** The retake's row (NEW_RETAKE_COLUMNS). */
  readonly values: unknown[];
  /** Its event's detail: the event stream reads the new take's key before the colon. */
  readonly detail: string;
}

/** What `request` writes to queue `take` (the job its plan returned) at `now`. */
export function retakeWrites(
  serviceId: number,
  take: NewJob,
  request: RetakeRequest,
  now: number,
): RetakeWrites {
  const { from, reviewer } = request;
  const note = request.note ?? null;
  return {
    rejection: { ...from, decision: "rejected", reviewer, note },
    values: [
      serviceId,
      take.key,
      take.manifest,
      take.videoId,
      take.specHash,
      from.key,
      from.specHash,
      reviewer,
      note,
      now,
    ],
    detail: `${take.key}: a retake of ${from.key}, by ${reviewer}`,
  };
}

/** The detail of a retake's withdrawal (a `forgotten` event: its unsent job is gone). */
export function withdrawnDetail(key: string): string {
  return `${key}: retake withdrawn; nothing was sent`;
}
