// What `plan` and `watch` read of a job's versions in the state: what a run would do with the version
// a manifest asks for now, and the version before it, which `--explain` (and a watcher) tells the
// changes against. One place for both rules, so that the two commands say the same.
import type { EarlierVersion, JobStatus } from "../manifest/index.js";
import type { JobRow } from "../state/job-store.js";

/** What a run would do with a job version, from its row (undefined: never recorded). */
export function jobStatusOf(row: JobRow | undefined): JobStatus {
  switch (row?.state) {
    case undefined:
    case "pending":
      return "new";
    case "Success":
      return "done";
    case "submitting":
    case "submitted":
      return "in-flight";
    case "uncertain":
      return "uncertain";
    case "Fail":
    case "Canceled":
      // Nothing was sent for a local failure: the next run simply tries again.
      return row.fail_kind === "local" ? "new" : "failed";
  }
}

/** The error of a version that ended in one (Fail, Canceled), else undefined. */
export function errorOfRow(row: JobRow | undefined): string | undefined {
  return row && (row.state === "Fail" || row.state === "Canceled") ? (row.error ?? row.state) : undefined;
}

/**
 * The version before `specHash` among `versions` (the rows of one job): the last one sent, else the
 * last one recorded.
 */
export function earlierVersionOf(versions: readonly JobRow[], specHash: string): EarlierVersion | undefined {
  const others = versions.filter((row) => row.spec_hash !== specHash);
  const sent = others.filter((row) => row.attempts > 0);
  const last = (sent.length > 0 ? sent : others).reduce<JobRow | undefined>(
    (latest, row) => (latest === undefined || row.updated_at > latest.updated_at ? row : latest),
    undefined,
  );
  return last && { specJson: last.spec_json, sent: last.attempts > 0 };
}
