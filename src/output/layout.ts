// The names of everything reel writes under OUT (the README, "Output layout"), in one place:
//
//   OUT/<manifest>/<id>.mp4              the current version's video
//   OUT/<manifest>/<id>.json             its record
//   OUT/<manifest>/<id>.<tag>[-N].mp4    a version kept beside it (an edit, a changed file moved aside)
//   OUT/<manifest>/<id>.<hash>.json      a kept version's record
//   OUT/results.jsonl, OUT/index.html    the reports (src/report)
//   OUT/.reel-journal.jsonl, OUT/.reel.lock
//
// Paths of videos and records are relative to OUT, with "/" (as the state file records them).
// The store's listLatestJobs (src/state/sqlite/sql/jobs.ts, and pg/sql/jobs.ts for PostgreSQL) spells
// `<manifest>/<id>.mp4` in SQL too: keep them together.

export const RESULTS_NAME = "results.jsonl";
export const REPORT_NAME = "index.html";
/** Kept in the output folder for good: unlinking a lock file would let two processes lock two files. */
export const OUT_LOCK_NAME = ".reel.lock";
export const JOURNAL_NAME = ".reel-journal.jsonl";

/** The hash part of a kept version's name: 8 hex digits tell versions of one video apart. */
const TAG_LENGTH = 8;

/** `<manifest>/<id>.mp4`: where the manifest's current version of a video is. */
export function videoFile(manifest: string, id: string): string {
  return `${manifest}/${id}.mp4`;
}

/** `<manifest>/<id>.json`, or `<id>.<hash>.json` for a version no longer the manifest's (`superseded`). */
export function recordFile(manifest: string, id: string, specHash: string, superseded: boolean): string {
  return superseded ? `${manifest}/${id}.${specHash.slice(0, TAG_LENGTH)}.json` : `${manifest}/${id}.json`;
}

/**
 * `<manifest>/<id>.<tag>.mp4`, `-2`, `-3`... for the `n`th candidate: a video kept beside the current
 * one. `tag`: the spec hash of its version, or the sha256 of a changed file's content.
 */
export function keptVideoFile(manifest: string, id: string, tag: string, n: number): string {
  return `${manifest}/${id}.${tag.slice(0, TAG_LENGTH)}${n > 1 ? `-${n}` : ""}.mp4`;
}

/**
 * Whether `file` is one of the names reel gives a video of job `manifest/id`: `<id>.mp4` or a kept
 * `<id>.<tag>[-n].mp4`. A name read back from a record (a file anyone can edit) is used only then.
 */
export function isOwnVideoFile(manifest: string, id: string, file: string): boolean {
  const prefix = `${manifest}/${id}.`;
  const rest = file.slice(prefix.length);
  return file.startsWith(prefix) && new RegExp(`^(?:[0-9a-f]{${TAG_LENGTH}}(?:-\\d+)?\\.)?mp4$`).test(rest);
}

/** The record beside a video: the same name, `.json`. */
export function recordOfVideo(file: string): string {
  return file.replace(/\.mp4$/, ".json");
}

/** Whether a file name in a manifest folder is a job record. */
export function isRecordName(name: string): boolean {
  return name.endsWith(".json");
}
