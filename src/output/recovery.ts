// The records in the output folder are a second copy of what was paid: each job's `<id>.json` (its
// spec hash, task id, status and file), `results.jsonl`, and the journal of submissions
// (`.reel-journal.jsonl`, see journal.ts), which alone shows the tasks in flight. A state file
// found empty beside them, or beside the logs of earlier runs, was lost (truncated, its WAL
// deleted), not new: starting afresh would pay again for every job and overwrite their videos with
// new takes. This module finds that
// evidence, and makes job rows of the records (records.ts reads them) for `reel run --rebuild-state`.
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { type FailKind, type JobStore, type RestoredJob } from "../state/job-store.js";
import { type JournaledJob, type JournalScope, journalPath, readJournal } from "./journal.js";
import { SAFE_NAME_PATTERN } from "../manifest/validate/schema.js";
import { isOwnVideoFile, recordFile } from "./layout.js";
import { entries, type RecordedJob, readRecord, readRecords, TASK_STATUSES } from "./records.js";
import { agree, plural } from "../plural.js";

const NOTHING_SENT = "nothing was sent for this video";

/**
 * Whether a record names a job reel could have written: the manifest name and video id as a
 * manifest allows them, and a spec hash. Records are files anyone can edit: one whose manifest
 * said `../..` would aim reel's writes outside OUT.
 */
function isOwnName(record: RecordedJob): boolean {
  return (
    SAFE_NAME.test(record.manifest) && SAFE_NAME.test(record.id) && /^[0-9a-f]{16,}$/.test(record.specHash)
  );
}

const SAFE_NAME = new RegExp(SAFE_NAME_PATTERN);

/** The row a record stands for, or undefined for a job whose record shows nothing was sent. */
export function restoredJobOf(record: RecordedJob, outDir: string): RestoredJob | undefined {
  if (!isOwnName(record)) return undefined;
  const time = (iso: string | null): number | null => {
    const ms = iso === null ? NaN : Date.parse(iso);
    return Number.isNaN(ms) ? null : ms;
  };
  const base = {
    key: `${record.manifest}/${record.id}`,
    manifest: record.manifest,
    videoId: record.id,
    specHash: record.specHash,
    specJson: JSON.stringify(record.spec ?? null),
    seconds: record.seconds,
    model: record.model,
    attempts: record.attempts,
    taskId: record.taskId,
    file: null,
    outDir: null,
    fileSize: null,
    fileSha256: null,
    error: record.error,
    createdAt: time(record.createdAt) ?? Date.now(),
    submittedAt: time(record.submittedAt),
    finishedAt: time(record.finishedAt),
    downloadedAt: null,
  };
  const unknownOutcome = (why: string): RestoredJob => ({
    ...base,
    state: "uncertain",
    failKind: null,
    taskStatus: null,
    error: `rebuilt from its record: ${why}; the service may have received it (--resubmit-uncertain sends it again)`,
  });
  switch (record.status) {
    case "unsent":
      return undefined;
    case "Success":
      return {
        ...base,
        state: "Success",
        failKind: null,
        taskStatus: "Success",
        // A file that is not one of this job's own names is not trusted (a record saying
        // ../victim.txt had that file moved into OUT): the video is fetched again instead. The
        // record's size and hash go with the file: the run checks it against them, as the lost
        // state would have (a video cut short is fetched again from its task, not adopted).
        ...(record.file !== null && isOwnVideoFile(record.manifest, record.id, record.file)
          ? {
              file: record.file,
              outDir: resolve(outDir),
              downloadedAt: time(record.downloadedAt),
              fileSize: record.size,
              fileSha256: record.sha256,
            }
          : {}),
      };
    case "Fail":
    case "Canceled": {
      // No task: refused (422) or failed before anything was sent, which the message says.
      const failKind: FailKind =
        record.taskId !== null ? "task" : record.error?.includes(NOTHING_SENT) ? "local" : "rejected";
      return { ...base, state: record.status, failKind, taskStatus: record.status };
    }
    case "uncertain":
      return { ...base, state: "uncertain", failKind: null, taskStatus: null };
    default:
      // A task on the service not final yet (followed by its id), or an intent with no answer.
      if (record.taskId !== null) {
        return {
          ...base,
          state: "submitted",
          failKind: null,
          taskStatus: TASK_STATUSES.has(record.status) ? record.status : "PreProcessing",
        };
      }
      return unknownOutcome(`sent (${record.status}) with no task id recorded`);
  }
}

/**
 * What shows that the state file at `statePath` was used before: reel's records in `outDir`, and
 * logs of earlier runs beside it (`logs/`, other than `currentLog`). A description for the message,
 * or undefined when nothing does. `records`: whether records count (a state file that is merely
 * missing may be new beside an output folder another state file fills).
 */
export function earlierWork(
  statePath: string,
  outDir: string,
  currentLog: string | undefined,
  records: boolean,
  scope: JournalScope,
): string | undefined {
  const found: string[] = [];
  if (records) {
    const n = readRecords(outDir).length;
    if (n > 0) found.push(`${plural(n, "job record")} in ${outDir}`);
  }
  // The journal's lines name this very state file: evidence even when it is merely missing.
  const sent = readJournal(outDir, scope).filter((entry) => entry.outcome !== "none").length;
  if (sent > 0) found.push(`${plural(sent, "submission")} of it in ${journalPath(outDir)}`);
  const logs = join(dirname(statePath), "logs");
  const earlier = entries(logs).filter((entry) => {
    // A log cut into parts (run-....1.log, see log/rotating-file.ts) is one run's: its first part counts.
    if (!entry.isFile() || !entry.name.endsWith(".log") || /\.\d+\.log$/.test(entry.name)) return false;
    const path = join(logs, entry.name);
    if (currentLog !== undefined && resolve(path) === resolve(currentLog)) return false;
    try {
      return statSync(path).size > 0;
    } catch {
      return false;
    }
  });
  if (earlier.length > 0)
    found.push(
      `the ${agree(earlier.length, "log", "logs")} of ${plural(earlier.length, "earlier run")} in ${logs}`,
    );
  return found.length > 0 ? found.join(" and ") : undefined;
}

/**
 * Of `jobs`, those the state file never sent whose record in `outDir` shows them sent (the same
 * spec hash, a task id): paid for with a state file that is gone (deleted with its logs and
 * journal) or with another one. Sent again, they would be paid twice and their records and videos
 * overwritten. One query for all, and one `stat` per job the state never sent.
 */
export async function listRecordedUnknown(
  store: JobStore,
  jobs: readonly {
    readonly key: string;
    readonly manifest: string;
    readonly id: string;
    readonly specHash: string;
  }[],
  outDir: string,
): Promise<{ key: string; taskId: string }[]> {
  const found: { key: string; taskId: string }[] = [];
  for (const job of await store.notSentAnywhere(jobs)) {
    const path = join(outDir, recordFile(job.manifest, job.id, job.specHash, false));
    if (!existsSync(path)) continue;
    const record = readRecord(path);
    if (record?.specHash === job.specHash && record.taskId !== null) {
      found.push({ key: job.key, taskId: record.taskId });
    }
  }
  return found;
}

/** The refusal of jobs whose records show them sent by a state file this one is not. */
export function recordedUnknownMessage(
  statePath: string,
  outDir: string,
  found: readonly { key: string; taskId: string }[],
): string {
  const first = found[0]!;
  return `${plural(found.length, "job")} of these manifests ${agree(found.length, "has a record", "have records")} in ${outDir} showing ${agree(found.length, "it was", "they were")} sent already (e.g. ${first.key}, task ${first.taskId}), but the state file ${statePath} does not know ${agree(found.length, "it", "them")}: it was lost, or another state file sent ${agree(found.length, "it", "them")}. reel does not pay for ${agree(found.length, "it", "them")} again or overwrite ${agree(found.length, "its video", "their videos")}. If this state file was lost, rerun with --rebuild-state (nothing is sent again); to make ${agree(found.length, "it", "them")} anew, give another --out. Nothing was sent.`;
}

/** The refusal of a lost state file, with the way out. */
export function lostStateMessage(statePath: string, how: "missing" | "empty", evidence: string): string {
  return `the state file ${statePath} is ${how === "missing" ? "missing" : "empty"}, but ${evidence} show that reel ran with it before: it was lost (emptied, deleted, or its -wal file deleted). It is the record of what was paid, so reel does not start afresh and pay again for every job. Rerun with --rebuild-state to rebuild it from the records and the journal in the output folder (${basename(statePath)} then holds each recorded job as done, followed by its task id, or uncertain: none is submitted again; jobs with no record are new). Nothing was sent.`;
}

/** What the journal shows that the state file does not know (see checkJournal). */
export interface JournalCheck {
  /**
   * Submissions whose job version is missing, or shows fewer attempts: the intent itself, committed
   * durably before the request left, is gone. Only a state file that lost commits (deleted, emptied,
   * its -wal deleted, an older copy put back) shows that.
   */
  readonly unknown: JournaledJob[];
  /**
   * Submissions whose answer the journal has and the state file lost (a crash between the two
   * writes: the row is still `submitting`, in that same attempt). As [row id, task id].
   */
  readonly answered: [rowId: number, taskId: string][];
}

/** The journal's submissions checked against the state file: one indexed lookup per job version. */
export async function checkJournal(
  store: JobStore,
  journaled: readonly JournaledJob[],
): Promise<JournalCheck> {
  const unknown: JournaledJob[] = [];
  const answered: [number, string][] = [];
  for (const entry of journaled) {
    if (entry.outcome === "none") continue;
    const head = await store.versionHead(`${entry.manifest}/${entry.id}`, entry.specHash);
    if (head === undefined || head.attempts < entry.attempt) unknown.push(entry);
    else if (entry.taskId !== null && head.state === "submitting" && head.attempts === entry.attempt)
      answered.push([head.id, entry.taskId]);
  }
  return { unknown, answered };
}

/** The refusal of a state file that lost commits the journal shows, with the way out. */
export function lostCommitsMessage(
  statePath: string,
  outDir: string,
  unknown: readonly JournaledJob[],
): string {
  const first = unknown[0]!;
  const example = `${first.manifest}/${first.id}${first.taskId ? ` (task ${first.taskId})` : ""}`;
  return `the state file ${statePath} does not know ${plural(unknown.length, "submission")} that ${journalPath(outDir)} shows ${agree(unknown.length, "was", "were")} sent with it (${example}${unknown.length > 1 ? ", ..." : ""}): it lost its latest changes (deleted, emptied, its -wal file deleted, or an older copy put back). It is the record of what was paid, so reel does not send ${agree(unknown.length, "it", "them")} again. Rerun with --rebuild-state to add ${agree(unknown.length, "it", "them")} back from the records and the journal in the output folder (each is then followed by its task id, or uncertain: none is submitted again). Nothing was sent.`;
}
