// What the user sees while a run goes: on a TTY, one status line redrawn in place (counts per stage and
// an ETA); anywhere else, one plain line per event, so logs and CI output stay readable.
import { formatDuration } from "../duration.js";

export type Stage = "uploaded" | "speech" | "submitted" | "running" | "done" | "failed" | "uncertain";

export interface ProgressEvent {
  readonly stage: Stage | "note";
  readonly key?: string;
  readonly detail?: string;
}

export interface ProgressSink {
  start(totalJobs: number, alreadyDone: number): void;
  event(event: ProgressEvent): void;
  stop(): void;
}

export const silentProgress: ProgressSink = { start() {}, event() {}, stop() {} };

type Writable = { write(text: string): unknown; readonly columns?: number };

/** For scripts (`watch --json`): one JSON object per line and event, with its time. */
export function makeJsonProgress(stream: Writable, now: () => number = Date.now): ProgressSink {
  const line = (fields: Record<string, unknown>): void => {
    stream.write(`${JSON.stringify({ at: new Date(now()).toISOString(), ...fields })}\n`);
  };
  return {
    start(total, done) {
      line({ event: "start", jobs: total, alreadyDone: done });
    },
    event(e) {
      line({ event: e.stage, key: e.key ?? null, detail: e.detail ?? null });
    },
    stop() {},
  };
}

/** Every event to each of `sinks`. */
export function teeProgress(...sinks: ProgressSink[]): ProgressSink {
  return {
    start: (total, done) => sinks.forEach((s) => s.start(total, done)),
    event: (e) => sinks.forEach((s) => s.event(e)),
    stop: () => sinks.forEach((s) => s.stop()),
  };
}

export function makeLineProgress(stream: Writable, now: () => number = Date.now): ProgressSink {
  const started = now();
  return {
    start(total, done) {
      stream.write(`reel: ${total} ${total === 1 ? "job" : "jobs"}, ${done} already done\n`);
    },
    event(e) {
      const seconds = ((now() - started) / 1000).toFixed(1).padStart(6);
      stream.write(`[${seconds}s] ${e.stage.padEnd(9)} ${e.key ?? ""}${e.detail ? ` ${e.detail}` : ""}\n`);
    },
    stop() {},
  };
}

export function makeTtyProgress(stream: Writable, now: () => number = Date.now): ProgressSink {
  // Running jobs are a set of keys (below), not a count: a job ends whether or not it was seen running.
  const counts: Record<Exclude<Stage, "running">, number> = {
    uploaded: 0,
    speech: 0,
    submitted: 0,
    done: 0,
    failed: 0,
    uncertain: 0,
  };
  let total = 0;
  let doneAtStart = 0;
  let started = now();
  let timer: NodeJS.Timeout | undefined;
  const notes: string[] = [];
  const running = new Set<string>(); // keys seen running and not yet ended

  function eta(): string {
    const doneNow = counts.done + counts.failed + counts.uncertain;
    const left = total - doneAtStart - doneNow;
    if (doneNow === 0 || left <= 0) return "";
    const perJob = (now() - started) / doneNow;
    return ` · ETA ${formatDuration(perJob * left)}`;
  }

  function draw(): void {
    const finished = doneAtStart + counts.done;
    const line =
      `${finished}/${total} done · ${counts.submitted} submitted · ${running.size} running · ` +
      `${counts.failed} failed · ${counts.uncertain} uncertain · ${counts.uploaded} uploads · ${counts.speech} speech${eta()}`;
    // Cut to the terminal's width: a wrapped line would leave its first part on screen at each redraw.
    const width = stream.columns ?? 0;
    stream.write(`\r\x1b[2K${width > 1 && line.length >= width ? `${line.slice(0, width - 2)}…` : line}`);
  }

  return {
    start(t, d) {
      total = t;
      doneAtStart = d;
      started = now();
      timer = setInterval(draw, 200);
      timer.unref();
      draw();
    },
    event(e) {
      if (e.stage === "note") {
        notes.push(`${e.key ?? ""} ${e.detail ?? ""}`.trim());
        stream.write(`\r\x1b[2K${notes.at(-1)}\n`);
      } else {
        if (e.stage === "running") {
          if (e.key !== undefined) running.add(e.key);
        } else {
          counts[e.stage]++;
          if (
            e.key !== undefined &&
            (e.stage === "done" || e.stage === "failed" || e.stage === "uncertain")
          ) {
            running.delete(e.key);
          }
        }
        if (e.stage === "failed" || e.stage === "uncertain") {
          stream.write(`\r\x1b[2K${e.stage}: ${e.key ?? ""} ${e.detail ?? ""}\n`);
        }
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      draw();
      stream.write("\n");
    },
  };
}
