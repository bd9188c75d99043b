// Reading back what reel wrote in the output folder: the per-job records (`<id>.json`, see
// job-record.ts), the lines of results.jsonl, and the submissions of the journal. `reel run
// --rebuild-state` makes job rows of them, and a state file found empty beside them is known lost
// (recovery.ts).
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type JournaledJob, type JournalScope, readJournal } from "./journal.js";
import type { DecisionFields } from "./decision-fields.js";
import type { JobResult } from "./job-record.js";
import { isRecordName, RESULTS_NAME } from "./layout.js";

/**
 * A job as its record in OUT shows it: the fields job-record.ts writes, read back from a file anyone
 * can edit (a time may be missing), and the spec that was sent (per-job records only; results.jsonl
 * has none).
 */
export type RecordedJob = Omit<JobResult, "createdAt" | keyof DecisionFields> & {
  readonly createdAt: string | null;
  readonly spec?: unknown;
  /**
   * What the video held when reel wrote it (per-job records of a reel that recorded it): a rebuilt
   * state checks the file against these, as the lost one would have.
   */
  readonly size: number | null;
  readonly sha256: string | null;
};

/** The statuses of a task on the service that is not final yet. */
export const TASK_STATUSES: ReadonlySet<string> = new Set(["PreProcessing", "Pending", "Running"]);

/** How far a record shows a job went: of two records of one job version, the further one counts. */
function rank(status: string): number {
  if (status === "unsent") return 0;
  if (status === "submitting") return 1;
  if (status === "uncertain") return 2;
  if (TASK_STATUSES.has(status)) return 3;
  return 4; // Success, Fail, Canceled
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

function recordOf(value: unknown): RecordedJob | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const manifest = str(r.manifest);
  const id = str(r.id);
  const specHash = str(r.specHash);
  const status = str(r.status);
  if (!manifest || !id || !specHash || !status) return undefined;
  return {
    manifest,
    id,
    specHash,
    status,
    taskId: str(r.taskId) ?? (typeof r.taskId === "number" ? String(r.taskId) : null),
    file: str(r.file),
    error: str(r.error),
    attempts: typeof r.attempts === "number" ? r.attempts : 1,
    model: str(r.model) ?? "",
    seconds: typeof r.seconds === "number" ? r.seconds : 0,
    createdAt: str(r.createdAt),
    submittedAt: str(r.submittedAt),
    finishedAt: str(r.finishedAt),
    downloadedAt: str(r.downloadedAt),
    size: typeof r.size === "number" && Number.isSafeInteger(r.size) && r.size > 0 ? r.size : null,
    sha256: typeof r.sha256 === "string" && /^[0-9a-f]{64}$/.test(r.sha256) ? r.sha256 : null,
    ...("spec" in r ? { spec: r.spec } : {}),
  };
}

export function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * The version and decision a record at `path` names (`decision` undefined: written by a reel before
 * decisions), or undefined when missing, cut short or not reel's.
 */
export function readRecordFields(
  path: string,
): { readonly specHash: string; readonly decision: DecisionFields | undefined } | undefined {
  const value = readJson(path);
  const record = recordOf(value);
  if (!record) return undefined;
  const r = value as Record<string, unknown>;
  if (!("decision" in r)) return { specHash: record.specHash, decision: undefined };
  return {
    specHash: record.specHash,
    decision: {
      decision: r.decision === "approved" || r.decision === "rejected" ? r.decision : null,
      reviewer: str(r.reviewer),
      decidedAt: str(r.decidedAt),
      note: str(r.note),
    },
  };
}

/** The record at `path`, or undefined when missing, cut short or not reel's. */
export function readRecord(path: string): RecordedJob | undefined {
  return recordOf(readJson(path));
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined; // cut short, or not reel's
  }
}

/**
 * A submission of the journal as a record: answered (a task, followed by its id) or not (sent, its
 * outcome unknown). Undefined for one the service refused for certain (nothing was created).
 */
function recordOfJournal(entry: JournaledJob): RecordedJob | undefined {
  if (entry.outcome === "none") return undefined;
  return {
    manifest: entry.manifest,
    id: entry.id,
    specHash: entry.specHash,
    status: entry.outcome === "task" ? "PreProcessing" : "submitting",
    taskId: entry.taskId,
    file: null,
    error: null,
    attempts: entry.attempt,
    model: entry.model,
    seconds: entry.seconds,
    createdAt: entry.sentAt,
    submittedAt: entry.answeredAt,
    finishedAt: null,
    downloadedAt: null,
    size: null,
    sha256: null,
  };
}

/**
 * Every job version recorded in `outDir`: the per-job records of each manifest folder, the lines
 * of results.jsonl, and (given `scope`, the state file's) the submissions of the journal. Of two
 * records of one version, the later attempt counts, then the one that went further; the spec comes
 * from a per-job record.
 */
export function readRecords(outDir: string, scope?: JournalScope): RecordedJob[] {
  const found = new Map<string, RecordedJob>();
  const add = (record: RecordedJob | undefined): void => {
    if (!record) return;
    const key = `${record.manifest}/${record.id}\n${record.specHash}`;
    const known = found.get(key);
    if (!known) return void found.set(key, record);
    const further =
      record.attempts !== known.attempts
        ? record.attempts > known.attempts
          ? record
          : known
        : rank(record.status) > rank(known.status)
          ? record
          : known;
    const other = further === record ? known : record;
    const spec = known.spec !== undefined ? known.spec : record.spec;
    // results.jsonl carries no size and hash: those of a per-job record of the same file are kept.
    const facts =
      further.sha256 === null && other.sha256 !== null && other.file === further.file
        ? { size: other.size, sha256: other.sha256 }
        : {};
    found.set(key, { ...further, ...facts, ...(spec === undefined ? {} : { spec }) });
  };
  for (const folder of entries(outDir)) {
    if (!folder.isDirectory()) continue;
    for (const file of entries(join(outDir, folder.name))) {
      if (file.isFile() && isRecordName(file.name)) {
        add(recordOf(readJson(join(outDir, folder.name, file.name))));
      }
    }
  }
  let lines: string[] = [];
  try {
    lines = readFileSync(join(outDir, RESULTS_NAME), "utf8").split("\n");
  } catch {
    // none
  }
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      add(recordOf(JSON.parse(line)));
    } catch {
      // a line cut short
    }
  }
  if (scope) for (const entry of readJournal(outDir, scope)) add(recordOfJournal(entry));
  return [...found.values()];
}
