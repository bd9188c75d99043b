// Retakes (migration 13; ReviewRecords.queueRetake in job-store.ts). A retake's state is read from
// its job: queued while the job is unsent and unclaimed, sent once claimed, dropped once forgotten.
import { isTakeOf, takeOf } from "../../../manifest/expand/takes.js";
import { schemaVersion } from "../../../sqlite/migrate.js";
import { StateFileError } from "../../../errors/state.js";
import type { RetakeRequest, RetakeRow, VideoTakes } from "../../job-store.js";
import { unsent } from "../../job-state-rule.js";
import * as review from "../../review-rows.js";
import { type SqlContext, sql } from "./context.js";
import { recordDecisions } from "./decisions.js";
import { insertJob, JOB_HEAD_SQL } from "./jobs.js";
import { jobRowOf, jobRows } from "./job-rows.js";

export function listRetakes(c: SqlContext, manifests?: readonly string[]): RetakeRow[] {
  // A reader does not migrate: a file an earlier reel wrote has no retakes.
  if (schemaVersion(c.db) < 13) return [];
  const rows = (
    sql(c, `${review.SELECT_RETAKES} WHERE (? < 0 OR retakes.service_id = ?) ORDER BY retakes.id`).all(
      c.serviceId,
      c.serviceId,
    ) as Record<string, unknown>[]
  ).map(review.retakeOf);
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
    const writes = review.retakeWrites(c.serviceId, take, request, c.now());
    recordDecisions(c, [writes.rejection]);
    const head = insertJob(c, take);
    const { lastInsertRowid } = sql(
      c,
      `INSERT INTO retakes (${review.NEW_RETAKE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(...writes.values);
    c.turn.event(head.id, "retake", writes.detail);
    return review.retakeOf(
      sql(c, `${review.SELECT_RETAKES} WHERE retakes.id = ?`).get(lastInsertRowid) as Record<string, unknown>,
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
    c.turn.event(gone?.id ?? null, "forgotten", review.withdrawnDetail(key), key);
    return "withdrawn";
  }, true);
}
