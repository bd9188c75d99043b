// What the user sees while work goes: on a terminal, the live display (live-display.ts); anywhere
// else, one line per event (lines.ts). Colours are decided here, from reel's own io and flags (never
// picocolors' reading of process.env), so a test's environment is the one that counts.
import pc from "picocolors";
import type { ProgressSink } from "../engine/progress.js";
import { makeLineProgress, type Writable } from "./lines.js";
import { rawStream } from "./terminal-stream.js";

export { makeJsonProgress, makeLineProgress, teeProgress } from "./lines.js";
export { rawStream, wrappedOnTerminal } from "./terminal-stream.js";

export interface HumanProgressOptions {
  readonly concurrency: number;
  readonly watching: boolean;
  /** --no-color. */
  readonly noColor: boolean;
}

/**
 * Colours on a terminal, unless NO_COLOR is set to anything but nothing (no-color.org) or
 * --no-color was given.
 */
export function colorsWanted(
  io: { readonly env: Readonly<Record<string, string | undefined>>; readonly stderr: Writable },
  noColor: boolean,
): boolean {
  const env = io.env.NO_COLOR;
  return io.stderr.isTTY === true && !noColor && (env === undefined || env === "");
}

/**
 * The display on a terminal, lines elsewhere. The live display (and the terminal library under it) is
 * loaded only for a terminal: a runner of a fleet, its output in a log, starts without it.
 */
export async function makeHumanProgress(
  io: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly stderr: Writable;
    readonly signal?: AbortSignal;
  },
  o: HumanProgressOptions,
): Promise<ProgressSink> {
  if (io.stderr.isTTY !== true) return makeLineProgress(io.stderr);
  const { makeLiveDisplay } = await import("./live-display.js");
  // Its lines drawn to the width by itself, with cursor moves: written as they are.
  return makeLiveDisplay(rawStream(io.stderr), {
    colors: pc.createColors(colorsWanted(io, o.noColor)),
    concurrency: o.concurrency,
    watching: o.watching,
    ...(io.signal ? { signal: io.signal } : {}),
  });
}
