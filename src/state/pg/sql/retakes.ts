// Retakes: src/state/sqlite/sql/retakes.ts's statements, mirrored. queueRetake and withdrawRetake are
// transactions: queueRetake holds a transaction lock on its video (two reviewers retaking one video
// at once are numbered one after the other); withdrawRetake's DELETE is the compare-and-set with a
// runner's claim (claimJob updates only a pending row: the second of the two finds it moved on).
import type pg from "pg";
import { isTakeOf, takeOf } from "../../../manifest/expand/takes.js";
import { StateFileError } from "../../../errors/state.js";
import type { RetakeRequest, RetakeRow, VideoTakes } from "../../job-store.js";
import { unsent } from "../../job-state-rule.js";
import * as review from "../../review-rows.js";
import { inTransaction, type PgContext, processName } from "./context.js";
import { recordDecisions } from "./decisions.js";
import { JOB_COLUMNS, jobRowOf } from "./job-rows.js";
import { upsertJobs } from "./jobs.js";

/** The advisory lock key of retakes (any constant; "rtk" in ASCII), with the video's hash as the second. */
const RETAKE_LOCK = 0x72746b;

export async function listRetakes(c: PgContext, manifests?: readonly string[]): Promise<RetakeRow[]> {
  const { rows } = await c.pool.query(
    `${review.SELECT_RETAKES} WHERE ($1 < 0 OR retakes.service_id = $1)
       AND ($2::text[] IS NULL OR retakes.manifest = ANY ($2::text[])) ORDER BY retakes.id`,
    [c.serviceId, manifests === undefined ? null : [...manifests]],
  );
  return rows.map(review.retakeOf);
}

async function videoTakes(
  c: PgContext,
  client: pg.ClientBase,
  manifest: string,
  video: string,
): Promise<VideoTakes> {
  const jobs = await client.query(
    `SELECT ${JOB_COLUMNS} FROM jobs WHERE service_id = $1 AND manifest = $2
       AND (video_id = $3 OR left(video_id, length($3) + 1) = $3 || '~') ORDER BY id`,
    [c.serviceId, manifest, video],
  );
  const retakes = await client.query(
    `${review.SELECT_RETAKES} WHERE retakes.service_id = $1 AND retakes.manifest = $2
       AND left(retakes.video_id, length($3) + 1) = $3 || '~' ORDER BY retakes.id`,
    [c.serviceId, manifest, video],
  );
  return {
    jobs: jobs.rows.map(jobRowOf).filter((row) => isTakeOf(row.video_id, video)),
    retakes: retakes.rows.map(review.retakeOf).filter((row) => isTakeOf(row.videoId, video)),
  };
}

export async function queueRetake(c: PgContext, request: RetakeRequest): Promise<RetakeRow> {
  return inTransaction(c, async (client) => {
    const from = await client.query<{ manifest: string; video_id: string }>(
      "SELECT manifest, video_id FROM jobs WHERE service_id = $1 AND job_key = $2 AND spec_hash = $3",
      [c.serviceId, request.from.key, request.from.specHash],
    );
    const found = from.rows[0];
    if (!found) throw new StateFileError(`${request.from.key} is not in the store: nothing to retake`);
    const video = takeOf(found.video_id).video;
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
      RETAKE_LOCK,
      `${c.serviceId}\n${found.manifest}/${video}`,
    ]);
    const take = request.plan(await videoTakes(c, client, found.manifest, video));
    const now = c.now();
    const writes = review.retakeWrites(c.serviceId, take, request, now);
    await recordDecisions(c, [writes.rejection], client);
    const [job] = await upsertJobs(c, [take], client);
    const made = await client.query<{ id: string }>(
      `INSERT INTO retakes (${review.NEW_RETAKE_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      writes.values,
    );
    await client.query(
      "INSERT INTO events (at, job_id, kind, detail, job_key, runner) VALUES ($1, $2, 'retake', $3, $4, $5)",
      [now, job!.id, writes.detail, take.key, processName(c)],
    );
    const { rows } = await client.query(`${review.SELECT_RETAKES} WHERE retakes.id = $1`, [made.rows[0]!.id]);
    return review.retakeOf(rows[0]!);
  });
}

export async function withdrawRetake(c: PgContext, key: string): Promise<"withdrawn" | "sent" | "none"> {
  return inTransaction(c, async (client) => {
    const retake = await client.query<{ id: string; spec_hash: string }>(
      "SELECT id, spec_hash FROM retakes WHERE service_id = $1 AND job_key = $2 AND withdrawn_at IS NULL FOR UPDATE",
      [c.serviceId, key],
    );
    const found = retake.rows[0];
    if (!found) return "none";
    const gone = await client.query<{ id: string }>(
      `DELETE FROM jobs WHERE service_id = $1 AND job_key = $2 AND spec_hash = $3
         AND ${unsent()} RETURNING id`,
      [c.serviceId, key, found.spec_hash],
    );
    if (gone.rowCount === 0) {
      const still = await client.query(
        "SELECT 1 FROM jobs WHERE service_id = $1 AND job_key = $2 AND spec_hash = $3",
        [c.serviceId, key, found.spec_hash],
      );
      if (still.rowCount !== 0) return "sent";
    }
    const now = c.now();
    await client.query("UPDATE retakes SET withdrawn_at = $1 WHERE id = $2", [now, found.id]);
    await client.query(
      "INSERT INTO events (at, job_id, kind, detail, job_key, runner) VALUES ($1, $2, 'forgotten', $3, $4, $5)",
      [now, gone.rows[0]?.id ?? null, review.withdrawnDetail(key), key, processName(c)],
    );
    return "withdrawn";
  });
}
