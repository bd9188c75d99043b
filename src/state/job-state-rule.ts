// The rules of a job's state that both backends write in their SQL (sqlite/sql/, pg/sql/), spelled
// once: the rows a submission may be claimed from and what the claim writes, the way back to
// pending, the attempt given back, and what counts as sent. Plain SQL that SQLite and PostgreSQL
// read alike; each backend adds its own placeholders around it.

/** `column`, of table `table` when one is named (a statement that joins jobs with another table). */
const col = (table: string | undefined, column: string): string => (table ? `${table}.${column}` : column);

/**
 * The compare of a claim (markSubmitting): a submission starts only from pending (where
 * --retry-failed and --resubmit-uncertain put a job first) or from a failure before anything was
 * sent. A job in any other state was claimed already, by this process or another: paid once.
 */
export const CLAIMABLE = "(state = 'pending' OR (state IN ('Fail', 'Canceled') AND fail_kind = 'local'))";

/** What a claim writes (besides updated_at): the intent, its attempt counted, the last answer cleared. */
export const CLAIM =
  "state = 'submitting', attempts = attempts + 1, fail_kind = NULL, error = NULL, task_id = NULL, task_status = NULL, result_url = NULL";

/** The final states a job may go back to pending from (markPending): never from one in flight. */
export const RETRYABLE = "state IN ('Fail', 'Canceled', 'uncertain')";

/** The attempt a claim counted, given back: the request was not sent, or was refused for certain. */
export const GIVE_BACK = "attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END";

/** A job nothing was ever sent for: pending, no attempt counted, no task (of table `table`, if named). */
export const unsent = (table?: string): string =>
  `${col(table, "state")} = 'pending' AND ${col(table, "attempts")} = 0 AND ${col(table, "task_id")} IS NULL`;

/** A job being made or made (as paid for): a new job with its spec elsewhere pays again. */
export const MADE = "state IN ('Success', 'submitting', 'submitted')";

/** A retake's state (see RetakeState), over `retakes` and its job `jobs` (left joined). */
export const RETAKE_STATE = `CASE WHEN retakes.withdrawn_at IS NOT NULL THEN 'withdrawn'
  WHEN jobs.id IS NULL THEN 'dropped'
  WHEN ${unsent("jobs")} THEN 'queued'
  ELSE 'sent' END`;
