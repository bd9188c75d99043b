// The jobs' data embedded in the page (`#reel-data`): each job as the array of its values, made a
// row at a time and handed out in pieces.
import { type JobRow, versionKey } from "../state/job-store.js";
import { jsonForScript } from "./escape-html.js";
import { PIECE_CHARS } from "./pieces.js";
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

function packedJob(job: ReportJob): unknown[] {
  return EMBEDDED_JOB_FIELDS.map((field) =>
    field === "chunks"
      ? job.chunks.map((chunk) => EMBEDDED_CHUNK_FIELDS.map((key) => chunk[key]))
      : job[field],
  );
}

/** The embedded data, `{"jobs":[...],"chunks":[...],"rows":[[...],...]}`, a row at a time, in pieces. */
export class EmbeddedData {
  private piece = `{"jobs":${jsonForScript(EMBEDDED_JOB_FIELDS)},"chunks":${jsonForScript(EMBEDDED_CHUNK_FIELDS)},"rows":[`;
  private first = true;

  constructor(private readonly options: HtmlReportOptions) {}

  /** Adds a row; returns a piece once one is big enough to write. */
  add(row: JobRow): string | undefined {
    const { options } = this;
    const job = toReportJob(
      row,
      options.outDir,
      options.thisRun?.has(row.id) ?? false,
      options.decisions?.get(versionKey(row.job_key, row.spec_hash)),
    );
    this.piece += `${this.first ? "" : ","}${jsonForScript(packedJob(job))}`;
    this.first = false;
    if (this.piece.length < PIECE_CHARS) return undefined;
    const piece = this.piece;
    this.piece = "";
    return piece;
  }

  end(): string {
    return `${this.piece}]}`;
  }
}
