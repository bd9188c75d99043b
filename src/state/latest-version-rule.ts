// Which version of a job stands for it where one is shown per job (listLatestJobs: reel status, the
// review page, export): one rule for both backends (sqlite/sql/jobs.ts, pg/sql/jobs.ts), in SQL that
// SQLite and PostgreSQL read alike.

/**
 * The ids of the latest version of each job of the services `scope` selects (a condition on
 * `service_id`): the version whose video holds <id>.mp4 (the manifest's current one: an edit that
 * was undone gives the older version its name back), else the newest. The name is
 * output/layout.ts's videoFile, spelled in SQL.
 */
export function latestVersionIds(scope: string): string {
  return `SELECT id FROM (
      SELECT id, row_number() OVER (
        PARTITION BY service_id, job_key
        ORDER BY coalesce(file = manifest || '/' || video_id || '.mp4', false) DESC, id DESC
      ) AS rank
      FROM jobs WHERE ${scope}
    ) AS ranked WHERE rank = 1`;
}
