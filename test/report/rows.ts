// Job rows as the state file holds them, made up for renderer tests and the 2,000-card page.
import type { JobSpec } from "../../src/manifest/types.js";
import type { JobRow, JobState } from "../../src/state/job-store.js";

const T0 = Date.UTC(2025, 4, 1, 9, 0, 0);

export function makeRow(
  fields: Partial<Omit<JobRow, "spec_json">> & { spec?: JobSpec; manifest: string; video_id: string },
): JobRow {
  const spec: JobSpec = fields.spec ?? {
    model: "actor-2",
    resolution: "720p",
    aspectRatio: "16:9",
    chunks: [{ duration: 5, text: "a presenter waves" }],
  };
  const seconds = spec.chunks.reduce((sum, c) => sum + c.duration, 0);
  const { spec: _spec, ...rest } = fields;
  return {
    id: 1,
    job_key: `${fields.manifest}/${fields.video_id}`,
    spec_hash: "0".repeat(64),
    spec_json: JSON.stringify(spec),
    seconds,
    model: spec.model,
    state: "Success",
    fail_kind: null,
    attempts: 1,
    task_id: "1800000000000000001",
    task_status: "Success",
    result_url: null,
    file: `${fields.manifest}/${fields.video_id}.mp4`,
    out_dir: "/out",
    error: null,
    created_at: T0,
    submitted_at: T0 + 1_000,
    running_at: T0 + 2_000,
    finished_at: T0 + 12_000,
    downloaded_at: T0 + 13_000,
    updated_at: T0 + 13_000,
    file_size: null,
    file_sha256: null,
    file_stamp: null,
    ...rest,
  };
}

const STATES: readonly JobState[] = [
  "Success",
  "Success",
  "Success",
  "Success",
  "Fail",
  "uncertain",
  "submitted",
];

/**
 * `count` jobs over five manifests, most Success, some Fail, uncertain or still Running. Every video
 * of a Success points at `videoFile` (relative to OUT) so a test needs one real file only.
 */
export function manyRows(count: number, videoFile: string): JobRow[] {
  return Array.from({ length: count }, (_, i) => {
    const state = STATES[i % STATES.length]!;
    const manifest = `campaign-${i % 5}`;
    return makeRow({
      id: i + 1,
      manifest,
      video_id: `v${i}`,
      state,
      task_status: state === "submitted" ? "Running" : state,
      file: state === "Success" ? videoFile : null,
      error:
        state === "Fail"
          ? "the source image could not be decoded"
          : state === "uncertain"
            ? "the connection closed before the service answered"
            : null,
      spec: {
        model: i % 3 ? "actor-2" : "avatar-h1",
        resolution: "720p",
        aspectRatio: i % 4 ? "16:9" : "9:16",
        chunks: [
          { duration: 5, text: `take ${i}: a presenter walks through the spring collection` },
          { duration: 3, audio: { kind: "speech", voiceId: "17", text: `line ${i} of the voice-over` } },
        ],
      },
    });
  });
}
