// The jobs table: reading job versions, and adding or forgetting them (their state changes are in
// job-states.ts). Scoped by the store's service unless said. Mirrors src/state/sqlite/sql/jobs.ts.
import type pg from "pg";
import { StateFileError } from "../../../errors/state.js";
import {
  type JobHead,
  type JobRow,
  type NewJob,
  type VersionHead,
  type VersionRef,
  versionKey,
} from "../../job-store.js";
import { NOT_SANDBOX } from "../../service-address.js";
import { type PgContext, toNumber } from "./context.js";
import { JOB_COLUMNS, jobColumnsOf, jobRowOf } from "./job-rows.js";
import { MADE, unsent } from "../../job-state-rule.js";
import { latestVersionIds } from "../../latest-version-rule.js";

/**
 * Two statements whatever the number of jobs: the insert of the new ones (arrays unnested), then
 * the heads of all. Not one: rows another runner inserted at the same moment are skipped by ON
 * CONFLICT yet invisible to that statement's snapshot; the second statement sees them. On `db`,
 * the transaction's client of a write that adds a job among others (a retake).
 */
export async function upsertJobs(
  c: PgContext,
  jobs: readonly NewJob[],
  db: pg.ClientBase | pg.Pool = c.pool,
): Promise<JobHead[]> {
  if (jobs.length === 0) return [];
  const now = c.now();
  const keys = jobs.map((job) => job.key);
  const hashes = jobs.map((job) => job.specHash);
  await db.query(
    `INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, created_at, updated_at)
       SELECT $1::bigint, t.*, 'pending', $9::bigint, $9::bigint
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[])
           AS t (job_key, manifest, video_id, spec_hash, spec_json, seconds, model)
       ON CONFLICT (service_id, job_key, spec_hash) DO NOTHING`,
    [
      c.serviceId,
      keys,
      jobs.map((job) => job.manifest),
      jobs.map((job) => job.videoId),
      hashes,
      jobs.map((job) => job.specJson),
      jobs.map((job) => job.seconds),
      jobs.map((job) => job.model),
      now,
    ],
  );
  const { rows } = await db.query<{
    id: string;
    job_key: string;
    spec_hash: string;
    state: string;
    file: string | null;
  }>(
    `SELECT id, job_key, spec_hash, state, file FROM jobs
       WHERE service_id = $1 AND (job_key, spec_hash) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
    [c.serviceId, keys, hashes],
  );
  const heads = new Map(
    rows.map((row) => [
      versionKey(row.job_key, row.spec_hash),
      { id: toNumber(row.id), state: row.state as JobHead["state"], file: row.file },
    ]),
  );
  return jobs.map((job) => heads.get(versionKey(job.key, job.specHash))!);
}

export async function versionHead(
  c: PgContext,
  key: string,
  specHash: string,
): Promise<VersionHead | undefined> {
  const { rows } = await c.pool.query(
    "SELECT id, state, attempts, file FROM jobs WHERE service_id = $1 AND job_key = $2 AND spec_hash = $3",
    [c.serviceId, key, specHash],
  );
  const row = rows[0];
  return row && { id: toNumber(row.id), state: row.state, attempts: row.attempts, file: row.file };
}

/** Of `jobs`, those whose version no service's row shows sent. */
export async function notSentAnywhere<T extends VersionRef>(c: PgContext, jobs: readonly T[]): Promise<T[]> {
  if (jobs.length === 0) return [];
  const { rows } = await c.pool.query<{ i: string }>(
    `SELECT t.i FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t (job_key, spec_hash, i)
       WHERE NOT EXISTS (SELECT 1 FROM jobs j
         WHERE j.job_key = t.job_key AND j.spec_hash = t.spec_hash AND j.attempts > 0)
       ORDER BY t.i`,
    [jobs.map((job) => job.key), jobs.map((job) => job.specHash)],
  );
  return rows.map((row) => jobs[Number(row.i) - 1]!);
}

/** Of `jobs`, those whose version this service has not recorded. */
export async function notRecorded<T extends VersionRef>(c: PgContext, jobs: readonly T[]): Promise<T[]> {
  if (jobs.length === 0) return [];
  const { rows } = await c.pool.query<{ i: string }>(
    `SELECT t.i FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t (job_key, spec_hash, i)
       WHERE NOT EXISTS (SELECT 1 FROM jobs j
         WHERE j.service_id = $1 AND j.job_key = t.job_key AND j.spec_hash = t.spec_hash)
       ORDER BY t.i`,
    [c.serviceId, jobs.map((job) => job.key), jobs.map((job) => job.specHash)],
  );
  return rows.map((row) => jobs[Number(row.i) - 1]!);
}

export async function jobsOfVersions(c: PgContext, jobs: readonly VersionRef[]): Promise<JobRow[]> {
  if (jobs.length === 0) return [];
  return jobRows(
    c,
    "WHERE service_id = $1 AND (job_key, spec_hash) IN (SELECT * FROM unnest($2::text[], $3::text[]))",
    [c.serviceId, jobs.map((job) => job.key), jobs.map((job) => job.specHash)],
  );
}

async function jobRows(c: PgContext, where: string, values: unknown[]): Promise<JobRow[]> {
  const { rows } = await c.pool.query(`SELECT ${JOB_COLUMNS} FROM jobs ${where}`, values);
  return rows.map(jobRowOf);
}

export async function findJob(c: PgContext, key: string, specHash: string): Promise<JobRow | undefined> {
  const [row] = await jobRows(c, "WHERE service_id = $1 AND job_key = $2 AND spec_hash = $3", [
    c.serviceId,
    key,
    specHash,
  ]);
  return row;
}

export async function findJobById(c: PgContext, id: number): Promise<JobRow | undefined> {
  const [row] = await jobRows(c, "WHERE id = $1", [id]);
  return row;
}

export async function getJob(c: PgContext, id: number): Promise<JobRow> {
  const row = await findJobById(c, id);
  if (!row) throw new StateFileError(`job ${id} is not in the store`);
  return row;
}

/**
 * One statement for the whole list: for each job this service never sent (no row, or pending with
 * no attempt), the base URL of the newest row of another service, not ignored nor a sandbox (any
 * machine's), that was sent.
 */
export async function listSentElsewhere(
  c: PgContext,
  jobs: readonly { readonly key: string; readonly specHash: string }[],
  ignore: readonly string[],
): Promise<{ key: string; baseUrl: string }[]> {
  if (jobs.length === 0) return [];
  const { rows } = await c.pool.query<{ job_key: string; base_url: string }>(
    `SELECT wanted.job_key, other.base_url
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS wanted (job_key, spec_hash, ord)
       JOIN LATERAL (
         SELECT services.base_url FROM jobs JOIN services ON services.id = jobs.service_id
           WHERE jobs.job_key = wanted.job_key AND jobs.spec_hash = wanted.spec_hash
             AND jobs.service_id <> $3 AND jobs.attempts > 0 AND services.base_url <> ALL ($4::text[])
             AND ${NOT_SANDBOX("services.base_url")}
           ORDER BY jobs.id DESC LIMIT 1
       ) AS other ON true
       WHERE NOT EXISTS (
         SELECT 1 FROM jobs AS here
           WHERE here.service_id = $3 AND here.job_key = wanted.job_key AND here.spec_hash = wanted.spec_hash
             AND NOT (here.attempts = 0 AND here.state = 'pending'))
       ORDER BY wanted.ord`,
    [jobs.map((job) => job.key), jobs.map((job) => job.specHash), c.serviceId, [...ignore]],
  );
  return rows.map((row) => ({ key: row.job_key, baseUrl: row.base_url }));
}

export async function downloadedVersions(c: PgContext): Promise<Set<string>> {
  const { rows } = await c.pool.query<{ job_key: string; spec_hash: string }>(
    "SELECT job_key, spec_hash FROM jobs WHERE service_id = $1 AND state = 'Success' AND file IS NOT NULL",
    [c.serviceId],
  );
  return new Set(rows.map((row) => versionKey(row.job_key, row.spec_hash)));
}

export async function madeSpecs(c: PgContext, specHashes?: readonly string[]): Promise<Map<string, string>> {
  const { rows } =
    specHashes === undefined
      ? await c.pool.query<{ spec_hash: string; job_key: string }>(
          `SELECT spec_hash, job_key FROM jobs WHERE service_id = $1 AND ${MADE} ORDER BY id`,
          [c.serviceId],
        )
      : await c.pool.query<{ spec_hash: string; job_key: string }>(
          `SELECT spec_hash, job_key FROM jobs WHERE service_id = $1 AND ${MADE} AND spec_hash = ANY($2) ORDER BY id`,
          [c.serviceId, specHashes],
        );
  return new Map(rows.map((row) => [row.spec_hash, row.job_key]));
}

export async function listJobs(c: PgContext): Promise<JobRow[]> {
  return jobRows(c, "WHERE service_id = $1 ORDER BY id", [c.serviceId]);
}

export async function listManifestJobs(c: PgContext, manifest: string): Promise<JobRow[]> {
  return jobRows(c, "WHERE service_id = $1 AND manifest = $2 ORDER BY id", [c.serviceId, manifest]);
}

export async function jobsByVersion(c: PgContext): Promise<Map<string, JobRow>> {
  return new Map((await listJobs(c)).map((row) => [versionKey(row.job_key, row.spec_hash), row]));
}

export async function listLatestJobs(c: PgContext): Promise<(JobRow & { base_url: string })[]> {
  const { rows } = await c.pool.query(
    `SELECT ${jobColumnsOf("jobs")}, services.base_url FROM jobs JOIN services ON services.id = jobs.service_id
       WHERE jobs.id IN (${latestVersionIds("($1 < 0 OR service_id = $1)")})
       ORDER BY jobs.manifest, jobs.video_id`,
    [c.serviceId],
  );
  return rows.map((row) => ({ ...jobRowOf(row), base_url: row.base_url as string }));
}

export async function listInFlight(c: PgContext): Promise<JobRow[]> {
  return jobRows(c, "WHERE service_id = $1 AND state = 'submitted' ORDER BY id", [c.serviceId]);
}

/** Of any service. */
export async function listJobsWithFile(c: PgContext, key: string, file: string): Promise<JobRow[]> {
  return jobRows(c, "WHERE job_key = $1 AND file = $2 ORDER BY id", [key, file]);
}

/** One statement: the rows deleted and their events. */
export async function forgetUnsentJobs(
  c: PgContext,
  manifest: string,
  keep: ReadonlySet<string>,
): Promise<number> {
  const { rowCount } = await c.pool.query(
    `WITH gone AS (
       DELETE FROM jobs
         WHERE service_id = $1 AND manifest = $2 AND ${unsent()}
           AND job_key || chr(10) || spec_hash <> ALL ($3::text[])
         RETURNING id, job_key)
     INSERT INTO events (at, job_id, kind, detail, job_key, runner_id)
       SELECT $4::bigint, id, 'forgotten', job_key || ': no longer in its manifest; nothing was sent', job_key, $5::bigint
         FROM gone`,
    [c.serviceId, manifest, [...keep], c.now(), c.eventRunnerId ?? null],
  );
  return rowCount ?? 0;
}
