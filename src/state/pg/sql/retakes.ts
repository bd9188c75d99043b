// Retakes: src/state/sqlite/sql/retakes.ts's statements, mirrored. queueRetake and withdrawRetake are
// transactions: queueRetake holds a transaction lock on its video (two reviewers retaking one video
// at once are numbered one after the other); withdrawRetake's DELETE is the compare-and-set with a
// runner's claim (claimJob updates only a pending row: the second of the two finds it moved on).
import type pg from "pg";
import { isTakeOf, takeOf } from "../../../manifest/expand/takes.js";
import { StateFileError } from "../../../errors/state.js";
import type { RetakeRequest, RetakeRow, VideoTakes } from "../../job-store.js";
import { inTransaction, type PgContext, toNumber, toNumberOrNull } from "./context.js";
import { JOB_COLUMNS, jobRowOf } from "./job-rows.js";
import { RETAKE_STATE, unsent } from "../../job-state-rule.js";

const RETAKE_COLUMNS = `retakes.id, services.base_url, retakes.job_key, retakes.manifest, retakes.video_id,
  retakes.spec_hash, retakes.from_key, retakes.from_spec_hash, retakes.reviewer, retakes.note,
  retakes.queued_at, retakes.withdrawn_at, ${RETAKE_STATE} AS state`;

const FROM = `FROM retakes JOIN services ON services.id = retakes.service_id
  LEFT JOIN jobs ON jobs.service_id = retakes.service_id AND jobs.job_key = retakes.job_key
    AND jobs.spec_hash = retakes.spec_hash`;

/** The advisory lock key of retakes (any constant; "rtk" in ASCII), with the video's hash as the second. */
const RETAKE_LOCK = 0x72746b;

function retakeOf(r: Record<string, unknown>): RetakeRow {
  return {
    id: toNumber(r.id),
    baseUrl: r.base_url as string,
    key: r.job_key as string,
    manifest: r.manifest as string,
    videoId: r.video_id as string,
    specHash: r.spec_hash as string,
    fromKey: r.from_key as string,
    fromSpecHash: r.from_spec_hash as string,
    reviewer: r.reviewer as string,
    note: r.note as string | null,
    queuedAt: toNumber(r.queued_at),
    withdrawnAt: toNumberOrNull(r.withdrawn_at),
    state: r.state as RetakeRow["state"],
  };
}

export async function listRetakes(c: PgContext, manifests?: readonly string[]): Promise<RetakeRow[]> {
  const { rows } = await c.pool.query(
    `SELECT ${RETAKE_COLUMNS} ${FROM} WHERE ($1 < 0 OR retakes.service_id = $1)
       AND ($2::text[] IS NULL OR retakes.manifest = ANY ($2::text[])) ORDER BY retakes.id`,
    [c.serviceId, manifests === undefined ? null : [...manifests]],
  );
  return rows.map(retakeOf);
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
    `SELECT ${RETAKE_COLUMNS} ${FROM} WHERE retakes.service_id = $1 AND retakes.manifest = $2
       AND left(retakes.video_id, length($3) + 1) = $3 || '~' ORDER BY retakes.id`,
    [c.serviceId, manifest, video],
  );
  return {
    jobs: jobs.rows.map(jobRowOf).filter((row) => isTakeOf(row.video_id, video)),
    retakes: retakes.rows.map(retakeOf).filter((row) => isTakeOf(row.videoId, video)),
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
    await client.query(
      `INSERT INTO decisions (service_id, job_key, spec_hash, decision, reviewer, note, decided_at)
         VALUES ($1, $2, $3, 'rejected', $4, $5, $6)`,
      [c.serviceId, request.from.key, request.from.specHash, request.reviewer, request.note ?? null, now],
    );
    const job = await client.query<{ id: string }>(
      `WITH made AS (
         INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $9)
           ON CONFLICT (service_id, job_key, spec_hash) DO NOTHING RETURNING id)
       SELECT id FROM made UNION ALL
         SELECT id FROM jobs WHERE service_id = $1 AND job_key = $2 AND spec_hash = $5`,
      [
        c.serviceId,
        take.key,
        take.manifest,
        take.videoId,
        take.specHash,
        take.specJson,
        take.seconds,
        take.model,
        now,
      ],
    );
    const made = await client.query<{ id: string }>(
      `INSERT INTO retakes (service_id, job_key, manifest, video_id, spec_hash, from_key, from_spec_hash, reviewer, note, queued_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
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
      ],
    );
    await client.query("INSERT INTO events (at, job_id, kind, detail) VALUES ($1, $2, 'retake', $3)", [
      now,
      job.rows[0]?.id ?? null,
      `${take.key}: a retake of ${request.from.key}, by ${request.reviewer}`,
    ]);
    const { rows } = await client.query(`SELECT ${RETAKE_COLUMNS} ${FROM} WHERE retakes.id = $1`, [
      made.rows[0]!.id,
    ]);
    return retakeOf(rows[0]!);
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
    await client.query("INSERT INTO events (at, job_id, kind, detail) VALUES ($1, $2, 'forgotten', $3)", [
      now,
      gone.rows[0]?.id ?? null,
      `${key}: retake withdrawn; nothing was sent`,
    ]);
    return "withdrawn";
  });
}
