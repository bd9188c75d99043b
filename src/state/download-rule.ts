// What a download writes on its job's row, and what forgetting it clears: one rule for both backends
// (the state file's sql/job-states.ts and PostgreSQL's pg/sql/job-states.ts), so that they keep the
// same facts of a video written.
import type { VideoFacts } from "./job-store.js";

/** The columns markDownloaded sets: the video written at `now` (its size, hash and stamp, when known). */
export function downloadedFields(file: string, outDir: string, now: number, video?: VideoFacts) {
  return {
    file,
    out_dir: outDir,
    downloaded_at: now,
    error: null,
    ...(video && { file_size: video.size, file_sha256: video.sha256, file_stamp: video.stamp }),
  };
}

/** The columns forgetDownload clears: no video, as before its download. */
export const DOWNLOAD_FORGOTTEN = {
  file: null,
  out_dir: null,
  downloaded_at: null,
  file_size: null,
  file_sha256: null,
  file_stamp: null,
} as const;
