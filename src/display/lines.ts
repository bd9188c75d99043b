// What the user sees where there is no terminal to redraw (a pipe, a file, CI): one line per event,
// aligned, with the time since the start; and `watch --json`'s one JSON object per event.
import { isLineEvent, type ProgressSink } from "../engine/progress.js";
import { plural } from "../plural.js";

export type Writable = {
  write(text: string): unknown;
  readonly columns?: number;
  readonly rows?: number;
  readonly isTTY?: boolean;
};

/** The longest stage printed ("submitted", "uncertain"): the column the keys start after. */
const STAGE_WIDTH = 9;

/** For scripts (`watch --json`): one JSON object per line and event, with its time. */
export function makeJsonProgress(stream: Writable, now: () => number = Date.now): ProgressSink {
  const line = (fields: Record<string, unknown>): void => {
    stream.write(`${JSON.stringify({ at: new Date(now()).toISOString(), ...fields })}\n`);
  };
  return {
    start(total, done) {
      if (total > 0) line({ event: "start", jobs: total, alreadyDone: done });
    },
    event(e) {
      if (isLineEvent(e)) line({ event: e.stage, key: e.key ?? null, detail: e.detail ?? null });
    },
    stop() {},
  };
}

/** Every event to each of `sinks`; text to print, to the first that prints it. */
export function teeProgress(...sinks: ProgressSink[]): ProgressSink {
  const printer = sinks.find((s) => s.print !== undefined);
  return {
    start: (total, done) => sinks.forEach((s) => s.start(total, done)),
    event: (e) => sinks.forEach((s) => s.event(e)),
    ...(printer ? { print: (text: string) => printer.print!(text) } : {}),
    stop: () => sinks.forEach((s) => s.stop()),
  };
}

/** `[  12.3s] submitted spring/intro task 1001`: the parts joined by one space, the stage padded. */
export function makeLineProgress(stream: Writable, now: () => number = Date.now): ProgressSink {
  const started = now();
  return {
    start(total, done) {
      if (total > 0) stream.write(`reel: ${plural(total, "job")}, ${done} already done\n`);
    },
    event(e) {
      if (!isLineEvent(e)) return;
      const seconds = ((now() - started) / 1000).toFixed(1).padStart(6);
      // A video done is named by its file, which begins with its job's name: the two side by side
      // would say the name twice ("done spring/intro spring/intro.mp4").
      const named = e.stage === "done" && e.key !== undefined && e.detail?.startsWith(`${e.key}.`) === true;
      const rest = (named ? [e.detail] : [e.key, e.detail])
        .filter((part) => part !== undefined && part !== "")
        .join(" ");
      stream.write(`[${seconds}s] ${e.stage.padEnd(STAGE_WIDTH)} ${rest}\n`.replace(/ +\n$/, "\n"));
    },
    print: (text) => stream.write(text),
    stop() {},
  };
}
