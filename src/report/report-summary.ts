// The page's counts: jobs by status and seconds of video, in all and per manifest, and the facts the
// markup (banner, tiles, summary table, filters) is made from, counted a row at a time.
import { statusOf } from "../output/job-record.js";
import type { JobRow } from "../state/job-store.js";
import type { ReportJob } from "./report-job.js";

export interface ManifestSummary {
  /** The manifest's name; the empty string for the total. */
  readonly name: string;
  readonly jobs: number;
  readonly byStatus: ReadonlyMap<string, number>;
  /** Seconds of video of all the jobs. */
  readonly seconds: number;
  /** Seconds of video of the jobs that ended Success. */
  readonly doneSeconds: number;
}

export interface ReportSummary {
  /** Every status present, final ones first, in the order the summary shows them. */
  readonly statuses: readonly string[];
  readonly total: ManifestSummary;
  readonly manifests: readonly ManifestSummary[];
}

/** Final outcomes first (what a reviewer looks for), then jobs still on their way, latest stage first. */
const STATUS_ORDER = [
  "Success",
  "Fail",
  "Canceled",
  "uncertain",
  "Running",
  "Pending",
  "PreProcessing",
  "submitting",
  "unsent",
];

function statusRank(status: string): number {
  const rank = STATUS_ORDER.indexOf(status);
  return rank < 0 ? STATUS_ORDER.length : rank;
}

export function compareStatuses(a: string, b: string): number {
  return statusRank(a) - statusRank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

interface MutableSummary {
  name: string;
  jobs: number;
  byStatus: Map<string, number>;
  seconds: number;
  doneSeconds: number;
}

const emptySummary = (name: string): MutableSummary => ({
  name,
  jobs: 0,
  byStatus: new Map(),
  seconds: 0,
  doneSeconds: 0,
});

function add(summary: MutableSummary, job: Pick<ReportJob, "status" | "seconds">): void {
  summary.jobs++;
  summary.byStatus.set(job.status, (summary.byStatus.get(job.status) ?? 0) + 1);
  summary.seconds += job.seconds;
  if (job.status === "Success") summary.doneSeconds += job.seconds;
}

/** Counts by status and seconds of video, in all and per manifest, a job at a time. */
class SummaryTally {
  private readonly total = emptySummary("");
  private readonly manifests = new Map<string, MutableSummary>();

  add(job: Pick<ReportJob, "manifest" | "status" | "seconds">): void {
    add(this.total, job);
    let summary = this.manifests.get(job.manifest);
    if (!summary) {
      summary = emptySummary(job.manifest);
      this.manifests.set(job.manifest, summary);
    }
    add(summary, job);
  }

  summary(): ReportSummary {
    return {
      statuses: [...this.total.byStatus.keys()].sort(compareStatuses),
      total: this.total,
      manifests: [...this.manifests.values()],
    };
  }
}

/** Counts by status and seconds of video, in all and per manifest (manifests in order of first appearance). */
export function summarizeJobs(
  jobs: readonly Pick<ReportJob, "manifest" | "status" | "seconds">[],
): ReportSummary {
  const tally = new SummaryTally();
  for (const job of jobs) tally.add(job);
  return tally.summary();
}

/**
 * What the markup says of the rows, counted in one pass before their data is written: the totals,
 * and of the run's own rows (the banner's), their totals and those that failed (its next steps).
 * A row's id must be in `thisRun` (when it is the run's) by the time the row is added.
 */
export class PageFacts {
  readonly all = new SummaryTally();
  readonly own = new SummaryTally();
  readonly ownFailed: JobRow[] = [];

  constructor(private readonly thisRun: ReadonlySet<number> | undefined) {}

  add(row: JobRow): void {
    const counted = { manifest: row.manifest, status: statusOf(row), seconds: row.seconds };
    this.all.add(counted);
    if (this.thisRun && !this.thisRun.has(row.id)) return;
    this.own.add(counted);
    if (row.state === "Fail" || row.state === "Canceled") this.ownFailed.push(row);
  }
}
