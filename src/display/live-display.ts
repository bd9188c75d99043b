// The live display on a terminal: a block of a few lines redrawn in place (frame.ts draws it from
// live-state.ts), with what must stay (failures, uncertain jobs, notes, a watch's finished
// manifests) printed above it for good.
//
// The redraw is log-update's (7.2): it erases and rewrites only the lines that changed, wraps nothing
// itself when the lines fit (frame.ts breaks them to the width), wraps each frame in the terminal's
// synchronized-output mode so it never flickers half-drawn, and prints lasting text above the block
// (persist). Chosen over hand-written escape codes (the line counting is where such code breaks),
// over listr2 (a task-list framework that would own the flow of the run) and cli-progress (bars
// only: no free lines, nothing printed above). Version 7, not 8: 8 requires Node 22, reel runs on 20.
// Its cursor handling is left off (showCursor): hiding the cursor installs exit hooks on SIGINT
// that would stand in the way of reel's own (a second Ctrl-C quits at once).
import { createLogUpdate } from "log-update";
import type { ProgressEvent, ProgressSink } from "../engine/progress.js";
import { type Colors, renderFinal, renderFrame } from "./frame.js";
import type { Writable } from "./lines.js";
import { hangingIndent, wrapLine } from "./text-wrap.js";
import { applyEvent, makeLiveState } from "./live-state.js";

export interface LiveDisplayOptions {
  readonly colors: Colors;
  /** The run's generation slots: how many jobs may be at the service at once. */
  readonly concurrency: number;
  /** `watch`: manifests come and go, and the display says when it has none. @defaultValue false */
  readonly watching?: boolean;
  /** How often the frame is redrawn (ages and the ETA move on by themselves). @defaultValue 250 */
  readonly intervalMs?: number;
  readonly now?: () => number;
  /**
   * The user's stop (Ctrl-C): the entry point writes a line of its own then, not through the
   * display; the block is taken away first and drawn again below it.
   */
  readonly signal?: AbortSignal;
}

export function makeLiveDisplay(stream: Writable, o: LiveDisplayOptions): ProgressSink {
  const now = o.now ?? Date.now;
  const c = o.colors;
  const state = makeLiveState(o.concurrency, now());
  const update = createLogUpdate(stream as NodeJS.WritableStream, { showCursor: true });
  let timer: NodeJS.Timeout | undefined;
  let shownLines = 0;
  let stopped = false;

  const frameOptions = () => ({
    now: now(),
    width: stream.columns ?? 80,
    colors: c,
    watching: o.watching ?? false,
  });

  function draw(): void {
    if (timer === undefined) return; // not started, or stopped: nothing is on screen to redraw
    const frame = frameOptions();
    // A short terminal keeps the block shorter than itself: it scrolls otherwise, and the redraw
    // would rewrite lines no longer on screen. The jobs listed by name fill what the rest leaves.
    const rest = renderFrame(state, { ...frame, maxJobs: 0 }).length;
    const maxJobs = Math.max(0, Math.min(5, (stream.rows ?? 24) - rest - 2));
    const lines = renderFrame(state, { ...frame, maxJobs });
    // log-update 7 rewrites a frame whose line count changed from the first changed line down,
    // which leaves lines of the old frame below (fixed in 8): such a frame is drawn afresh.
    if (lines.length !== shownLines) update.clear();
    shownLines = lines.length;
    update(lines.join("\n"));
  }

  /**
   * Text that stays: printed above the block, which is drawn again below it; broken at words to the
   * width (the block below is redrawn in place from where the text ends).
   */
  function persist(text: string): void {
    const room = (stream.columns ?? 80) - 1;
    const body = (text.endsWith("\n") ? text.slice(0, -1) : text)
      .split("\n")
      // A failure's or a note's continuation indented under its first words.
      .map((line) => wrapLine(line, room, { indent: Math.max(2, hangingIndent(line, room)) }).join("\n"))
      .join("\n");
    if (timer === undefined) {
      stream.write(`${body}\n`);
      return;
    }
    update.clear();
    shownLines = 0;
    stream.write(`${body}\n`);
    draw();
  }

  function lasting(e: ProgressEvent): string | undefined {
    const what = [e.key, e.detail].filter((p) => p !== undefined && p !== "").join(": ");
    switch (e.stage) {
      case "failed":
        return c.red(`✗ failed ${what}`);
      case "uncertain":
        return c.yellow(`? uncertain ${what}`);
      case "note":
        return what;
      case "finished":
        return `${c.bold(e.key ?? "")}: ${colourCounts(c, e.detail ?? "")}`;
      default:
        return undefined;
    }
  }

  o.signal?.addEventListener(
    "abort",
    () => {
      if (timer === undefined) return;
      update.clear();
      shownLines = 0;
      setImmediate(draw); // after the entry point's line
    },
    { once: true },
  );

  return {
    // The jobs come with the `manifest` events (a run's before its start).
    start() {
      if (stopped) return;
      state.startedAt = now();
      timer ??= setInterval(draw, o.intervalMs ?? 250);
      timer.unref();
      draw();
    },
    event(e) {
      applyEvent(state, e, now());
      const text = lasting(e);
      if (text !== undefined) persist(text);
    },
    print(text) {
      persist(text);
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      stopped = true;
      // The bar and the counts stay on screen, above the summary; the jobs in flight go.
      update.clear();
      stream.write(`${renderFinal(state, frameOptions()).join("\n")}\n`);
      update.done();
    },
  };
}

/** "12 Success, 1 Fail": the failures in red, the uncertain in yellow. */
function colourCounts(c: Colors, text: string): string {
  return text
    .split(", ")
    .map((part) =>
      /\b(Fail|Canceled)\b/.test(part)
        ? c.red(part)
        : /\buncertain\b/.test(part)
          ? c.yellow(part)
          : /\bSuccess\b/.test(part)
            ? c.green(part)
            : part,
    )
    .join(", ");
}
