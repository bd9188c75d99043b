// What the page asks the store to do: decide on a take, undo its latest decision, retake it. The
// same rules as the commands (reel approve, reject, undecide, retake): a job that is not a current
// take of the service is refused, and so is a decision on a take without a video or a retake of one
// not ended. Nothing here can pay: a retake is an unsent job that the next run sends once.
import { UsageError } from "../../errors/usage.js";
import { checkNote, checkReviewer } from "../reviewer-rules.js";
import { type DecisionAction, type JobRow, type ReviewStore } from "../../state/job-store.js";
import { planRetake } from "../retake.js";

/** A request the page should not have made: its status and a message for the page. */
export class RequestRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DECISIONS: ReadonlySet<string> = new Set(["approved", "rejected", "cleared"]);
const ENDED: ReadonlySet<JobRow["state"]> = new Set(["Success", "Fail", "Canceled", "uncertain"]);

function text(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new RequestRefused(400, `${field} should be text`);
  return value;
}

function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof UsageError) throw new RequestRefused(400, error.message);
    throw error;
  }
}

export function reviewerIn(body: Record<string, unknown>): string {
  return checked(() => checkReviewer(text(body, "reviewer") ?? "", "the reviewer"));
}

async function currentTake(
  store: ReviewStore,
  baseUrl: string,
  body: Record<string, unknown>,
): Promise<JobRow> {
  const job = text(body, "job");
  if (job === undefined) throw new RequestRefused(400, "name the take: job");
  const row = (await store.listLatestJobs()).find((r) => r.job_key === job && r.base_url === baseUrl);
  if (row === undefined) throw new RequestRefused(404, `no job ${job}`);
  return row;
}

/** Records a decision (approved, rejected with a note, cleared) on the current version of a take. */
export async function decide(
  store: ReviewStore,
  baseUrl: string,
  body: Record<string, unknown>,
): Promise<void> {
  const decision = text(body, "decision") ?? "";
  if (!DECISIONS.has(decision))
    throw new RequestRefused(400, "decision should be approved, rejected or cleared");
  const reviewer = reviewerIn(body);
  const note =
    decision === "rejected" ? checked(() => checkNote(text(body, "note") ?? "", "the note")) : undefined;
  const row = await currentTake(store, baseUrl, body);
  if (decision !== "cleared" && row.state !== "Success") {
    throw new RequestRefused(409, `${row.job_key} has no video to decide on`);
  }
  await store.recordDecisions([
    {
      key: row.job_key,
      specHash: row.spec_hash,
      decision: decision as DecisionAction,
      reviewer,
      note: note ?? null,
    },
  ]);
}

/**
 * Undoes the latest decision of a take: the decision before it counts again (recorded anew, by the
 * reviewer who undoes, so the history says who), or the take is undecided when there was none.
 */
export async function undo(
  store: ReviewStore,
  baseUrl: string,
  body: Record<string, unknown>,
): Promise<void> {
  const reviewer = reviewerIn(body);
  const row = await currentTake(store, baseUrl, body);
  const history = await store.decisionHistory(row.job_key, row.spec_hash);
  if (history.length === 0) throw new RequestRefused(409, `${row.job_key} has no decision to undo`);
  const before = history.at(-2);
  await store.recordDecisions([
    {
      key: row.job_key,
      specHash: row.spec_hash,
      decision: before?.decision ?? "cleared",
      reviewer,
      note: before?.note ?? null,
    },
  ]);
}

/** Queues a retake of a take (paid by the next run, once); returns the new take's key. */
export async function retake(
  store: ReviewStore,
  baseUrl: string,
  body: Record<string, unknown>,
): Promise<string> {
  const reviewer = reviewerIn(body);
  const note = checked(() => checkNote(text(body, "note") ?? "", "the note"));
  const row = await currentTake(store, baseUrl, body);
  if (!ENDED.has(row.state)) throw new RequestRefused(409, `${row.job_key} has not ended yet`);
  const queued = await store.queueRetake({
    from: { key: row.job_key, specHash: row.spec_hash },
    reviewer,
    note: note ?? null,
    plan: (video) => planRetake(row, video),
  });
  return queued.key;
}
