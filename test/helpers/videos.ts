// A video in a test is judged whole: byte for byte against what the service served. Every
// successful sandbox task serves the same committed MP4 (src/sandbox/result-video.ts), so a file
// cut short, padded, written twice over or mixed up with another file never passes, where a check
// of four bytes at offset 4 ("ftyp") passed all of them.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { expect } from "vitest";
import { RESULT_VIDEO_PATH } from "../../src/sandbox/index.js";

/** The bytes of the video every successful sandbox task serves. */
export const SERVED_VIDEO: Buffer = readFileSync(RESULT_VIDEO_PATH);

const SAME = "the video the service served";

/** Says how `bytes` differ from the served video, in a line short enough for a failure message. */
function compare(bytes: Buffer): string {
  if (bytes.equals(SERVED_VIDEO)) return SAME;
  let at = 0;
  while (at < bytes.length && at < SERVED_VIDEO.length && bytes[at] === SERVED_VIDEO[at]) at++;
  return `${bytes.length} bytes, not the ${SERVED_VIDEO.length} bytes the service served: they differ from byte ${at}`;
}

/** Asserts that `bytes` are the served video, whole. */
export function expectServedBytes(bytes: Buffer, label?: string): void {
  expect(compare(bytes), label).toBe(SAME);
}

/** Asserts that the file at `path` is the served video, whole. */
export async function expectServedVideo(path: string, label: string = path): Promise<void> {
  expectServedBytes(await readFile(path), label);
}

/** Whether the file at `path` exists and is the served video, whole. */
export async function isServedVideo(path: string): Promise<boolean> {
  const bytes = await readFile(path).catch(() => undefined);
  return bytes !== undefined && bytes.equals(SERVED_VIDEO);
}
