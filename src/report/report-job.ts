// The record of one job as the page embeds it: read from the store's row, with local paths reduced
// to what a reviewer may see (a file's name, or a link relative to the page).
import { basename, isAbsolute, relative, sep } from "node:path";
import { statusOf } from "../output/job-record.js";
import { recordFile } from "../output/layout.js";
import { type DecisionFields, decisionFieldsOf } from "../output/decision-fields.js";
import type { DecisionRow, JobRow } from "../state/job-store.js";
import { relativeHref } from "./escape-html.js";
import { isRecord } from "../values.js";
import { readStoredSpec } from "../stored-spec.js";

/** One chunk as the page shows it. */
export interface ReportChunk {
  readonly duration: number;
  readonly text: string | null;
  /** The text of generated speech. */
  readonly speech: string | null;
  /** The voice of generated speech. */
  readonly voice: string | null;
  /** Where given audio comes from: a file name, a URL, or `asset <id>`. */
  readonly audio: string | null;
}

/**
 * The record of one job embedded in the page: what a card shows and what the filters match. Times
 * are milliseconds since the epoch (the page shows them in the reader's zone; ISO text for 100,000
 * jobs cost more to make than the rest of the record).
 */
export interface ReportJob extends Omit<DecisionFields, "decidedAt"> {
  readonly manifest: string;
  readonly id: string;
  readonly status: string;
  readonly model: string;
  readonly resolution: string | null;
  readonly aspectRatio: string | null;
  readonly seed: number | null;
  /** Where the source image comes from, as for `ReportChunk.audio`. */
  readonly source: string | null;
  /**
   * The source image to show: a URL relative to the page for a local file (percent-encoded
   * segments), or the https address of a remote one; null for an uploaded asset or none.
   */
  readonly thumb: string | null;
  readonly seconds: number;
  readonly attempts: number;
  readonly taskId: string | null;
  readonly error: string | null;
  readonly createdAt: number;
  readonly submittedAt: number | null;
  readonly finishedAt: number | null;
  readonly downloadedAt: number | null;
  readonly decidedAt: number | null;
  readonly chunks: readonly ReportChunk[];
  /** Relative URL of the video, or null when none was downloaded. */
  readonly video: string | null;
  /** Relative URL of the job's `.json` record. */
  readonly record: string;
  /** Whether the run (or watch) that wrote the page worked on the job. */
  readonly thisRun: boolean;
}

const stringOr = (v: unknown): string | null => (typeof v === "string" ? v : null);
const numberOr = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Names a reference without the local path: absolute paths say nothing to a reviewer and may be private. */
function describeRef(ref: unknown): string | null {
  if (!isRecord(ref)) return null;
  switch (ref.kind) {
    case "file":
      return typeof ref.path === "string" ? basename(ref.path) : "file";
    case "url":
      return stringOr(ref.url);
    case "asset":
      return typeof ref.id === "string" || typeof ref.id === "number" ? `asset ${ref.id}` : "asset";
    default:
      return null;
  }
}

/**
 * Where the page can show the source image from: a local file as a path relative to the page (the
 * page links to it, as to the videos; nothing is copied into it), an https source by its address.
 */
function thumbOf(ref: unknown, outDir: string | undefined): string | null {
  if (!isRecord(ref)) return null;
  if (ref.kind === "url" && typeof ref.url === "string" && /^https:\/\//i.test(ref.url)) return ref.url;
  if (ref.kind !== "file" || typeof ref.path !== "string" || outDir === undefined) return null;
  const path = relative(outDir, ref.path);
  if (path === "" || isAbsolute(path)) return null; // another drive: no relative link exists
  return relativeHref(path.split(sep).join("/"));
}

const idOr = (v: unknown): string | null =>
  typeof v === "string" || typeof v === "number" ? String(v) : null;

function chunkOf(chunk: unknown): ReportChunk {
  if (!isRecord(chunk)) return { duration: 0, text: null, speech: null, voice: null, audio: null };
  const audio = chunk.audio;
  const isSpeech = isRecord(audio) && audio.kind === "speech";
  return {
    duration: numberOr(chunk.duration) ?? 0,
    text: stringOr(chunk.text),
    speech: isSpeech ? stringOr(audio.text) : null,
    voice: isSpeech ? idOr(audio.voiceId) : null,
    audio: isSpeech ? null : describeRef(audio),
  };
}

/**
 * `outDir`: the page's folder, for links to local source images (none without it); `thisRun`:
 * whether the run that writes the page worked on the job; `decision`: the latest decision of the
 * job's version, if any.
 */
export function toReportJob(
  row: JobRow,
  outDir?: string,
  thisRun = false,
  decision?: DecisionRow,
): ReportJob {
  const spec = readStoredSpec(row.spec_json);
  const decided = decisionFieldsOf(decision);
  return {
    manifest: row.manifest,
    id: row.video_id,
    status: statusOf(row),
    model: row.model,
    resolution: spec.resolution ?? null,
    aspectRatio: spec.aspectRatio ?? null,
    seed: spec.seed ?? null,
    source: describeRef(spec.source),
    thumb: thumbOf(spec.source, outDir),
    seconds: row.seconds,
    attempts: row.attempts,
    taskId: row.task_id,
    error: row.error,
    createdAt: row.created_at,
    submittedAt: row.submitted_at,
    finishedAt: row.finished_at,
    downloadedAt: row.downloaded_at,
    chunks: spec.chunks.map(chunkOf),
    video: row.file === null ? null : relativeHref(row.file),
    record: relativeHref(recordFile(row.manifest, row.video_id, row.spec_hash, false)),
    decision: decided.decision,
    reviewer: decided.reviewer,
    decidedAt: decided.decision === null ? null : decision!.decidedAt,
    note: decided.note,
    thisRun,
  };
}
