// The jobs table: reading job versions, and adding or forgetting them (their state changes are in
// job-states.ts). Scoped by the store's service unless said.
import { schemaVersion } from "../../../sqlite/migrate.js";
import {
  type JobHead,
  type JobRow,
  type NewJob,
  type VersionHead,
  type VersionRef,
  versionKey,
} from "../../job-store.js";
import { type SqlContext, sql } from "./context.js";
import { jobRowOf, jobRows } from "./job-rows.js";
import { MADE, unsent } from "../../job-state-rule.js";
import { latestVersionIds } from "../../latest-version-rule.js";

/** A job version's head, by the unique index (service, key, spec hash). */
export const JOB_HEAD_SQL =
  "SELECT id, state, file FROM jobs WHERE service_id = ? AND job_key = ? AND spec_hash = ?";

/**
 * The heads of the versions already recorded read in one statement (a rerun's jobs are all there),
 * then the others inserted in one transaction; no whole row read back.
 */
export function upsertJobs(c: SqlContext, jobs: readonly NewJob[]): JobHead[] {
  const heads: (JobHead | undefined)[] = new Array<JobHead | undefined>(jobs.length);
  const rows = sql(
    c,
    `SELECT w.key, j.id, j.state, j.file FROM json_each(?) AS w
       CROSS JOIN jobs j ON j.service_id = ? AND j.job_key = w.value ->> 0 AND j.spec_hash = w.value ->> 1`,
    true,
  ).all(versionsJson(jobs), c.serviceId) as [number, number, JobHead["state"], string | null][];
  for (const [i, id, state, file] of rows) heads[i] = { id, state, file };
  if (rows.length < jobs.length) {
    c.turn.write(() => {
      jobs.forEach((job, i) => {
        heads[i] ??= insertJob(c, job);
      });
    });
  }
  return heads as JobHead[];
}

/**
 * `[[key, spec hash], ...]`: a list of job versions as one parameter, for json_each. Joined with
 * CROSS JOIN, which keeps the list the outer loop: each of its versions one index lookup. Left to
 * choose, SQLite scanned the service's jobs and the whole list for each (minutes at 40,000).
 */
function versionsJson(jobs: readonly { readonly key: string; readonly specHash: string }[]): string {
  return JSON.stringify(jobs.map((job) => [job.key, job.specHash]));
}

/**
 * A long list goes to SQLite a slice at a time: the 100,000 versions of a run's start in one JSON
 * text (8 MB, parsed by SQLite into memory the process keeps) added some 70 MB to its peak RSS.
 */
const LIST_SLICE = 5_000;

/** `read` of each slice of `list`, the results in order. */
function bySlices<T, R>(list: readonly T[], read: (slice: readonly T[]) => R[]): R[] {
  if (list.length <= LIST_SLICE) return read(list);
  const all: R[] = [];
  for (let from = 0; from < list.length; from += LIST_SLICE) {
    for (const item of read(list.slice(from, from + LIST_SLICE))) all.push(item);
  }
  return all;
}

/** Adds `job` as a pending job version unless it is recorded; its head either way. */
export function insertJob(c: SqlContext, job: NewJob): JobHead {
  const now = c.now();
  sql(
    c,
    `INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
       ON CONFLICT (service_id, job_key, spec_hash) DO NOTHING`,
  ).run(
    c.serviceId,
    job.key,
    job.manifest,
    job.videoId,
    job.specHash,
    job.specJson,
    job.seconds,
    job.model,
    now,
    now,
  );
  return sql(c, JOB_HEAD_SQL).get(c.serviceId, job.key, job.specHash) as JobHead;
}

export function versionHead(c: SqlContext, key: string, specHash: string): VersionHead | undefined {
  return sql(
    c,
    "SELECT id, state, attempts, file FROM jobs WHERE service_id = ? AND job_key = ? AND spec_hash = ?",
  ).get(c.serviceId, key, specHash) as VersionHead | undefined;
}

export function manifestsWithWork(c: SqlContext, names: readonly string[]): string[] {
  const wanted = new Set(names);
  const rows = sql(c, "SELECT DISTINCT manifest FROM jobs WHERE attempts > 0 OR file IS NOT NULL").all() as {
    manifest: string;
  }[];
  return rows.map((row) => row.manifest).filter((name) => wanted.has(name));
}

/** Of `jobs`, those whose version no service's row shows sent; the list the outer loop, as above. */
export function notSentAnywhere<T extends VersionRef>(c: SqlContext, jobs: readonly T[]): T[] {
  const statement = sql(
    c,
    `SELECT w.key FROM json_each(?) AS w WHERE NOT EXISTS (SELECT 1 FROM jobs j
       WHERE j.service_id IN (SELECT id FROM services) AND j.job_key = w.value ->> 0 AND j.spec_hash = w.value ->> 1
         AND j.attempts > 0)`,
    true,
  );
  return bySlices(jobs, (slice) =>
    (statement.all(versionsJson(slice)) as [number][]).map(([i]) => slice[i]!),
  );
}

/** Of `jobs`, those whose version this service has not recorded: the index alone, no row read. */
export function notRecorded<T extends VersionRef>(c: SqlContext, jobs: readonly T[]): T[] {
  const statement = sql(
    c,
    `SELECT w.key FROM json_each(?) AS w WHERE NOT EXISTS (SELECT 1 FROM jobs j
       WHERE j.service_id = ? AND j.job_key = w.value ->> 0 AND j.spec_hash = w.value ->> 1)`,
    true,
  );
  return bySlices(jobs, (slice) =>
    (statement.all(versionsJson(slice), c.serviceId) as [number][]).map(([i]) => slice[i]!),
  );
}

export function jobsOfVersions(
  c: SqlContext,
  jobs: readonly { readonly key: string; readonly specHash: string }[],
): JobRow[] {
  // The list is the outer loop (CROSS JOIN): each of its versions one probe.
  return (
    jobRows(
      c,
      `WHERE id IN (SELECT j.id FROM json_each(?) AS w
         CROSS JOIN jobs j ON j.service_id = ? AND j.job_key = w.value ->> 0 AND j.spec_hash = w.value ->> 1)`,
    ).all(versionsJson(jobs), c.serviceId) as unknown[][]
  ).map(jobRowOf);
}

export function findJob(c: SqlContext, key: string, specHash: string): JobRow | undefined {
  const values = jobRows(c, "WHERE service_id = ? AND job_key = ? AND spec_hash = ?").get(
    c.serviceId,
    key,
    specHash,
  ) as unknown[] | undefined;
  return values && jobRowOf(values);
}

export function findJobById(c: SqlContext, id: number): JobRow | undefined {
  const values = jobRows(c, "WHERE id = ?").get(id) as unknown[] | undefined;
  return values && jobRowOf(values);
}

export function getJob(c: SqlContext, id: number): JobRow {
  return jobRowOf(jobRows(c, "WHERE id = ?").get(id) as unknown[]);
}

export function listSentElsewhere(
  c: SqlContext,
  jobs: readonly { readonly key: string; readonly specHash: string }[],
  ignore: readonly string[],
): { key: string; baseUrl: string }[] {
  const elsewhere = new Map<string, string>(); // versionKey -> base URL
  const rows = sql(
    c,
    `SELECT jobs.job_key, jobs.spec_hash, services.base_url FROM jobs
       JOIN services ON services.id = jobs.service_id
       WHERE jobs.service_id <> ? AND jobs.attempts > 0 ORDER BY jobs.id`,
    true,
  ).all(c.serviceId) as [string, string, string][];
  for (const [key, hash, baseUrl] of rows) {
    if (!ignore.includes(baseUrl)) elsewhere.set(versionKey(key, hash), baseUrl);
  }
  if (elsewhere.size === 0) return [];
  const found: { key: string; baseUrl: string }[] = [];
  for (const job of jobs) {
    const baseUrl = elsewhere.get(versionKey(job.key, job.specHash));
    if (baseUrl === undefined) continue;
    const here = findJob(c, job.key, job.specHash);
    if (here === undefined || (here.attempts === 0 && here.state === "pending")) {
      found.push({ key: job.key, baseUrl });
    }
  }
  return found;
}

export function downloadedVersions(c: SqlContext): Set<string> {
  const rows = sql(
    c,
    "SELECT job_key, spec_hash FROM jobs WHERE service_id = ? AND state = 'Success' AND file IS NOT NULL",
    true,
  ).all(c.serviceId) as [string, string][];
  return new Set(rows.map(([key, hash]) => versionKey(key, hash)));
}

export function madeSpecs(c: SqlContext, specHashes?: readonly string[]): Map<string, string> {
  if (specHashes === undefined) {
    const all = sql(
      c,
      `SELECT spec_hash, job_key FROM jobs WHERE service_id = ? AND ${MADE} ORDER BY id`,
      true,
    );
    return new Map(all.all(c.serviceId) as [string, string][]);
  }
  const statement = sql(
    c,
    `SELECT spec_hash, job_key FROM jobs WHERE service_id = ? AND ${MADE}
       AND spec_hash IN (SELECT value FROM json_each(?)) ORDER BY id`,
    true,
  );
  // A hash's rows all come from its own slice, in order: the last one made is the one kept.
  return new Map(
    bySlices(specHashes, (slice) => statement.all(c.serviceId, JSON.stringify(slice)) as [string, string][]),
  );
}

export function listJobs(c: SqlContext): JobRow[] {
  return (jobRows(c, "WHERE service_id = ? ORDER BY id").all(c.serviceId) as unknown[][]).map(jobRowOf);
}

export function listManifestJobs(c: SqlContext, manifest: string): JobRow[] {
  return (
    jobRows(c, "WHERE service_id = ? AND manifest = ? ORDER BY id").all(c.serviceId, manifest) as unknown[][]
  ).map(jobRowOf);
}

export function listLatestJobs(c: SqlContext): (JobRow & { base_url: string })[] {
  if (schemaVersion(c.db) === 0) return [];
  return sql(
    c,
    `SELECT jobs.*, services.base_url FROM jobs JOIN services ON services.id = jobs.service_id
       WHERE jobs.id IN (${latestVersionIds("(? < 0 OR service_id = ?)")})
       ORDER BY jobs.manifest, jobs.video_id`,
  ).all(c.serviceId, c.serviceId) as (JobRow & { base_url: string })[];
}

export function listInFlight(c: SqlContext): JobRow[] {
  return (
    jobRows(c, "WHERE service_id = ? AND state = 'submitted' ORDER BY id").all(c.serviceId) as unknown[][]
  ).map(jobRowOf);
}

/** Of any service. */
export function listJobsWithFile(c: SqlContext, key: string, file: string): JobRow[] {
  return (
    // `service_id IN (...)`: the unique index (service_id, job_key, spec_hash) serves it, probed
    // once per service, where a condition on job_key alone would read every row at each download.
    (
      jobRows(c, "WHERE service_id IN (SELECT id FROM services) AND job_key = ? AND file = ?").all(
        key,
        file,
      ) as unknown[][]
    ).map(jobRowOf)
  );
}

export function forgetUnsentJobs(c: SqlContext, manifest: string, keep: ReadonlySet<string>): number {
  return c.turn.write(() => {
    const rows = sql(
      c,
      `SELECT id, job_key, spec_hash FROM jobs WHERE service_id = ? AND manifest = ? AND ${unsent()}`,
      true,
    ).all(c.serviceId, manifest) as [number, string, string][];
    let forgotten = 0;
    for (const [id, key, hash] of rows) {
      if (keep.has(versionKey(key, hash))) continue;
      sql(c, "DELETE FROM jobs WHERE id = ?").run(id);
      c.turn.event(id, "forgotten", `${key}: no longer in its manifest; nothing was sent`, key);
      forgotten++;
    }
    return forgotten;
  });
}

export function jobsByVersion(c: SqlContext): Map<string, JobRow> {
  return new Map(listJobs(c).map((row) => [versionKey(row.job_key, row.spec_hash), row]));
}
