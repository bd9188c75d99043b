// Retakes (migration 13; ReviewRecords.queueRetake in job-store.ts). A retake's state is read from
// its job: queued while the job is unsent and unclaimed, sent once claimed, dropped once forgotten.
import { isTakeOf, takeOf } from "../../../manifest/expand/takes.js";
import { schemaVersion } from "../../../sqlite/migrate.js";
import { StateFileError } from "../../../errors/state.js";
import type { RetakeRequest, RetakeRow, VideoTakes } from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";
import { recordDecisions } from "./decisions.js";
import { JOB_HEAD_SQL } from "./jobs.js";
import { jobRowOf, jobRows } from "./job-rows.js";
import { RETAKE_STATE, unsent } from "../../job-state-rule.js";

const RETAKE_COLUMNS = `retakes.id, services.base_url, retakes.job_key, retakes.manifest, retakes.video_id,
  retakes.spec_hash, retakes.from_key, retakes.from_spec_hash, retakes.reviewer, retakes.note,
  retakes.queued_at, retakes.withdrawn_at, ${RETAKE_STATE} AS state`;

const FROM = `FROM retakes JOIN services ON services.id = retakes.service_id
  LEFT JOIN jobs ON jobs.service_id = retakes.service_id AND jobs.job_key = retakes.job_key
    AND jobs.spec_hash = retakes.spec_hash`;

function retakeOf(r: Record<string, unknown>): RetakeRow {
  return {
    id: r.id as number,
    baseUrl: r.base_url as string,
    key: r.job_key as string,
    manifest: r.manifest as string,
    videoId: r.video_id as string,
    specHash: r.spec_hash as string,
    fromKey: r.from_key as string,
    fromSpecHash: r.from_spec_hash as string,
    reviewer: r.reviewer as string,
    note: r.note as string | null,
    queuedAt: r.queued_at as number,
    withdrawnAt: r.withdrawn_at as number | null,
    state: r.state as RetakeRow["state"],
  };
}

export function listRetakes(c: SqlContext, manifests?: readonly string[]): RetakeRow[] {
  // A reader does not migrate: a file an earlier reel wrote has no retakes.
  if (schemaVersion(c.db) < 13) return [];
  const rows = (
    sql(
      c,
      `SELECT ${RETAKE_COLUMNS} ${FROM} WHERE (? < 0 OR retakes.service_id = ?) ORDER BY retakes.id`,
    ).all(c.serviceId, c.serviceId) as Record<string, unknown>[]
  ).map(retakeOf);
  if (manifests === undefined) return rows;
  const wanted = new Set(manifests);
  return rows.filter((row) => wanted.has(row.manifest));
}

/** Every take of `video` of `manifest` (see VideoTakes). */
function videoTakes(c: SqlContext, manifest: string, video: string): VideoTakes {
  // The index of (service, key, hash) serves the prefix of the key; the exact test is isTakeOf.
  const prefix = `${manifest}/${video}`;
  const jobs = (
    jobRows(c, "WHERE service_id = ? AND job_key >= ? AND job_key < ? ORDER BY id").all(
      c.serviceId,
      prefix,
      `${prefix}\uffff`,
    ) as unknown[][]
  )
    .map(jobRowOf)
    .filter((row) => row.manifest === manifest && isTakeOf(row.video_id, video));
  const retakes = listRetakes(c, [manifest]).filter((row) => isTakeOf(row.videoId, video));
  return { jobs, retakes };
}

/** In one transaction of the turn (SQLite's write lock: no other writer between the read and the writes). */
export function queueRetake(c: SqlContext, request: RetakeRequest): RetakeRow {
  return c.turn.write(() => {
    const from = sql(
      c,
      "SELECT manifest, video_id FROM jobs WHERE service_id = ? AND job_key = ? AND spec_hash = ?",
    ).get(c.serviceId, request.from.key, request.from.specHash) as
      { manifest: string; video_id: string } | undefined;
    if (!from) throw new StateFileError(`${request.from.key} is not in the state file: nothing to retake`);
    const take = request.plan(videoTakes(c, from.manifest, takeOf(from.video_id).video));
    recordDecisions(c, [
      { ...request.from, decision: "rejected", reviewer: request.reviewer, note: request.note ?? null },
    ]);
    const now = c.now();
    sql(
      c,
      `INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
         ON CONFLICT (service_id, job_key, spec_hash) DO NOTHING`,
    ).run(
      c.serviceId,
      take.key,
      take.manifest,
      take.videoId,
      take.specHash,
      take.specJson,
      take.seconds,
      take.model,
      now,
      now,
    );
    const head = sql(c, JOB_HEAD_SQL).get(c.serviceId, take.key, take.specHash) as { id: number };
    const { lastInsertRowid } = sql(
      c,
      `INSERT INTO retakes (service_id, job_key, manifest, video_id, spec_hash, from_key, from_spec_hash, reviewer, note, queued_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      c.serviceId,
      take.key,
      take.manifest,
      take.videoId,
      take.specHash,
      request.from.key,
      request.from.specHash,
      request.reviewer,
      request.note ?? null,
      now,
    );
    c.turn.event(head.id, "retake", `${take.key}: a retake of ${request.from.key}, by ${request.reviewer}`);
    return retakeOf(
      sql(c, `SELECT ${RETAKE_COLUMNS} ${FROM} WHERE retakes.id = ?`).get(lastInsertRowid) as Record<
        string,
        unknown
      >,
    );
  });
}

/** Committed with synchronous=FULL (see StateStore.withdrawRetake). */
export function withdrawRetake(c: SqlContext, key: string): "withdrawn" | "sent" | "none" {
  return c.turn.write(() => {
    const retake = sql(
      c,
      "SELECT id, spec_hash FROM retakes WHERE service_id = ? AND job_key = ? AND withdrawn_at IS NULL",
    ).get(c.serviceId, key) as { id: number; spec_hash: string } | undefined;
    if (!retake) return "none";
    // The compare-and-set with a run's claim (markSubmitting claims only from pending).
    const gone = sql(
      c,
      `DELETE FROM jobs WHERE service_id = ? AND job_key = ? AND spec_hash = ? AND ${unsent()} RETURNING id`,
    ).get(c.serviceId, key, retake.spec_hash) as { id: number } | undefined;
    if (!gone && sql(c, JOB_HEAD_SQL).get(c.serviceId, key, retake.spec_hash) !== undefined) return "sent";
    sql(c, "UPDATE retakes SET withdrawn_at = ? WHERE id = ?").run(c.now(), retake.id);
    c.turn.event(gone?.id ?? null, "forgotten", `${key}: retake withdrawn; nothing was sent`);
    return "withdrawn";
  }, true);
}
