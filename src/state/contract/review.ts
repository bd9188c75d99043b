// Reviewers' decisions and retakes, as the store keeps them (docs/review.md).
import { type JobRow, type NewJob, versionKey } from "./job-row.js";

/** A reviewer's verdict on a take: `reel approve`, `reel reject` (or the review page). */
export type Verdict = "approved" | "rejected";
/** What a decision records: a verdict, or an earlier one cleared (`reel undecide`). */
export type DecisionAction = Verdict | "cleared";

/** A decision to record on a job version (its key and spec hash: an edited spec is another job). */
export interface NewDecision {
  readonly key: string;
  readonly specHash: string;
  readonly decision: DecisionAction;
  readonly reviewer: string;
  readonly note?: string | null;
}

/** A decision as recorded. */
export interface DecisionRow {
  /** Its order in the store: of one job version's decisions, the highest is the latest. */
  readonly id: number;
  /** The service of the job version, as the store names it (the `base_url` of listLatestJobs). */
  readonly baseUrl: string;
  readonly key: string;
  readonly specHash: string;
  readonly decision: DecisionAction;
  readonly reviewer: string;
  readonly note: string | null;
  /** Epoch milliseconds, by the clock of the process that recorded it. */
  readonly decidedAt: number;
}

/** Latest decisions of one service's job versions by versionKey(key, spec hash). */
export function decisionsByVersion(rows: readonly DecisionRow[]): Map<string, DecisionRow> {
  return new Map(rows.map((row) => [versionKey(row.key, row.specHash), row]));
}

/**
 * Reviewers' decisions, scoped by service and kept per job version (key and spec hash, not row id:
 * a version forgotten and made again, or rebuilt from the records, keeps its decisions). Every
 * decision is kept; the latest of a version counts. A store opened to review (openReviewStore)
 * writes them beside a run or watch that holds the store: see docs/review.md.
 */
export interface ReviewRecords {
  /**
   * Records `decisions`, all or none (one transaction), in their order; returns them as recorded.
   * Nothing checks that the job versions exist: the caller has read them.
   */
  recordDecisions(decisions: readonly NewDecision[]): Promise<DecisionRow[]>;
  /**
   * The latest decision of every decided job version of this service (of every service, for a
   * reader opened without one), in one query; of `versions` only, when given. A version whose
   * latest decision is `cleared` is listed with it: undecided again, and the history says by whom.
   */
  latestDecisions(
    versions?: readonly { readonly key: string; readonly specHash: string }[],
  ): Promise<DecisionRow[]>;
  /** Every decision on this job version of this service, oldest first. */
  decisionHistory(key: string, specHash: string): Promise<DecisionRow[]>;

  /**
   * Queues a retake of the take `request.from`, in one transaction that no other retake of the same
   * video runs beside (so two reviewers retaking at once make two takes, numbered apart): reads
   * every take of its video (`request.plan` is given them and returns the new take's job), records
   * the retaken take as rejected (reviewer, note), adds the new take as an unsent job, and the retake
   * that asks for it. The next run or watch of its manifest sends it (src/review/retake.ts says how
   * it finds it): the job is claimed as any job is, so it is paid once. `plan` may throw: nothing is
   * recorded then.
   */
  queueRetake(request: RetakeRequest): Promise<RetakeRow>;
  /**
   * Withdraws the retake that asked for the take `key`, if it is queued still: a compare-and-set with
   * the run's claim (markSubmitting), so of the two, one wins. "withdrawn": its unsent job is
   * forgotten (a run that had it claims nothing: JobGoneError); "sent": too late, it was claimed;
   * "none": no retake of that take is queued.
   */
  withdrawRetake(key: string): Promise<"withdrawn" | "sent" | "none">;
  /**
   * The retakes of this service (of every service, for a reader opened without one; of `manifests`
   * only, when given), in the order queued, each with its state.
   */
  listRetakes(manifests?: readonly string[]): Promise<RetakeRow[]>;
  /**
   * A mark of the jobs, decisions and retakes of this service (of every service, for a reader opened
   * without one) that differs once any of them changed: a few aggregates, no rows, so a live review
   * page checks it each second and reads the takes only when it moved. Marks are only compared.
   */
  changeMark(): Promise<string>;
}

/**
 * Every take of one video (`intro`, `intro~1`, `intro~2`... of one manifest) on the store's service:
 * what a retake is numbered and seeded after.
 */
export interface VideoTakes {
  /** Every version of every take, oldest first. */
  readonly jobs: readonly JobRow[];
  /** Every retake of the video ever queued, withdrawn ones too (their numbers are not given again). */
  readonly retakes: readonly RetakeRow[];
}

export interface RetakeRequest {
  /** The take retaken: its current version. */
  readonly from: { readonly key: string; readonly specHash: string };
  readonly reviewer: string;
  readonly note?: string | null;
  /** The new take's job, from the video's takes (see src/review/retake.ts). */
  readonly plan: (video: VideoTakes) => NewJob;
}

/**
 * queued: its job not claimed yet (withdrawable); sent: claimed (it may be in flight, done or
 * failed: its job says); withdrawn; dropped: its unsent job was forgotten (the video was edited or
 * removed from its manifest before the retake was sent).
 */
export type RetakeState = "queued" | "sent" | "withdrawn" | "dropped";

export interface RetakeRow {
  readonly id: number;
  readonly baseUrl: string;
  /** The new take: its job's key (`manifest/id~n`), manifest, id and spec hash. */
  readonly key: string;
  readonly manifest: string;
  readonly videoId: string;
  readonly specHash: string;
  /** The take retaken: its key and version. */
  readonly fromKey: string;
  readonly fromSpecHash: string;
  readonly reviewer: string;
  readonly note: string | null;
  /** Epoch milliseconds. */
  readonly queuedAt: number;
  readonly withdrawnAt: number | null;
  readonly state: RetakeState;
}
