// The jobs' data embedded in the page (`#reel-data`): each job as the array of its values, made a
// row at a time.
import { type JobRow, versionKey } from "../state/job-store.js";
import { jsonForScript } from "./escape-html.js";
import { type ReportChunk, type ReportJob, toReportJob } from "./report-job.js";
import type { HtmlReportOptions } from "./report-options.js";

/**
 * The fields of a job embedded in the page, in this order: each job is embedded as the array of its
 * values (chunks likewise), and the page puts the names back. The names 100,000 times over were half
 * of a big folder's page.
 */
export const EMBEDDED_JOB_FIELDS = [
  "manifest",
  "id",
  "status",
  "model",
  "resolution",
  "aspectRatio",
  "seed",
  "source",
  "thumb",
  "seconds",
  "attempts",
  "taskId",
  "error",
  "createdAt",
  "submittedAt",
  "finishedAt",
  "downloadedAt",
  "chunks",
  "video",
  "record",
  "decision",
  "reviewer",
  "decidedAt",
  "note",
  "thisRun",
] as const satisfies readonly (keyof ReportJob)[];

export const EMBEDDED_CHUNK_FIELDS = [
  "duration",
  "text",
  "speech",
  "voice",
  "audio",
] as const satisfies readonly (keyof ReportChunk)[];

/** The values of EMBEDDED_JOB_FIELDS (EMBEDDED_CHUNK_FIELDS for a chunk), position by position. */
type Packed<Fields extends readonly string[], Of, Chunk = never> = {
  -readonly [I in keyof Fields]: Fields[I] extends "chunks" ? Chunk : Of[Fields[I] & keyof Of];
};
type PackedChunk = Packed<typeof EMBEDDED_CHUNK_FIELDS, ReportChunk>;
type PackedJob = Packed<typeof EMBEDDED_JOB_FIELDS, ReportJob, PackedChunk[]>;

/**
 * A job's values in the order of EMBEDDED_JOB_FIELDS, written out: mapping the names over the job
 * cost a 100,000-job page 50 ms more. The type holds each value to its field's type.
 */
function packedJob(j: ReportJob): PackedJob {
  return [
    j.manifest,
    j.id,
    j.status,
    j.model,
    j.resolution,
    j.aspectRatio,
    j.seed,
    j.source,
    j.thumb,
    j.seconds,
    j.attempts,
    j.taskId,
    j.error,
    j.createdAt,
    j.submittedAt,
    j.finishedAt,
    j.downloadedAt,
    j.chunks.map((c): PackedChunk => [c.duration, c.text, c.speech, c.voice, c.audio]),
    j.video,
    j.record,
    j.decision,
    j.reviewer,
    j.decidedAt,
    j.note,
    j.thisRun,
  ];
}

/** The embedded data, `{"jobs":[...],"chunks":[...],"rows":[[...],...]}`, a row at a time. */
export class EmbeddedData {
  private first = true;

  constructor(private readonly options: HtmlReportOptions) {}

  /** A row's text, to write after the text of the rows before it. */
  add(row: JobRow): string {
    const { options } = this;
    const decision = options.decisions?.size
      ? options.decisions.get(versionKey(row.job_key, row.spec_hash))
      : undefined;
    const job = toReportJob(row, options.outDir, options.thisRun?.has(row.id) ?? false, decision);
    const text = `${this.first ? DATA_HEAD : ","}${jsonForScript(packedJob(job))}`;
    this.first = false;
    return text;
  }

  /** The text after the last row's. */
  end(): string {
    return `${this.first ? DATA_HEAD : ""}]}`;
  }
}

const DATA_HEAD = `{"jobs":${jsonForScript(EMBEDDED_JOB_FIELDS)},"chunks":${jsonForScript(EMBEDDED_CHUNK_FIELDS)},"rows":[`;
