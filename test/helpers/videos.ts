// A video in a test is judged whole: byte for byte against what the service served. A sandbox task
// serves the video of its request's shape and length (src/sandbox/result-video.ts), a pure function
// of width, height and seconds: the file's own header says which, and the bytes must then be exactly
// that video. So a file cut short, padded, written twice over or mixed up with another file never
// passes, where a check of four bytes at offset 4 ("ftyp") passed all of them.
import { readFile } from "node:fs/promises";
import { expect } from "vitest";
import { readVideoFacts, resultVideoBytes, type VideoFacts } from "../../src/sandbox/index.js";

const SAME = "the video the service served";

/** What the sandbox serves for a video of the shape and length `bytes` claims, if it serves one. */
function servedFor(bytes: Buffer): { facts: VideoFacts; served: Buffer } | undefined {
  try {
    const facts = readVideoFacts(bytes);
    return { facts, served: resultVideoBytes(facts.width, facts.height, facts.duration) };
  } catch {
    return undefined;
  }
}

/** Says how `bytes` differ from the served video, in a line short enough for a failure message. */
function compare(bytes: Buffer): string {
  const expected = servedFor(bytes);
  if (!expected)
    return `${bytes.length} bytes that are no video the sandbox serves (its header cannot be read)`;
  const { facts, served } = expected;
  if (bytes.equals(served)) return SAME;
  let at = 0;
  while (at < bytes.length && at < served.length && bytes[at] === served[at]) at++;
  return `${bytes.length} bytes, not the ${served.length} bytes served for ${facts.width}x${facts.height}, ${facts.duration} s: they differ from byte ${at}`;
}

/** Asserts that `bytes` are a video the sandbox served, whole. */
export function expectServedBytes(bytes: Buffer, label?: string): void {
  expect(compare(bytes), label).toBe(SAME);
}

/** Asserts that the file at `path` is a video the sandbox served, whole. */
export async function expectServedVideo(path: string, label: string = path): Promise<void> {
  expectServedBytes(await readFile(path), label);
}

/** Whether the file at `path` exists and is a video the sandbox served, whole. */
export async function isServedVideo(path: string): Promise<boolean> {
  const bytes = await readFile(path).catch(() => undefined);
  return bytes !== undefined && compare(bytes) === SAME;
}
