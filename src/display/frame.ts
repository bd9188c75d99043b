// The live display's frame: a pure function from what is known (live-state.ts) and the clock to the
// lines drawn, each cut to the terminal's width (a wrapped line would break the redraw in place).
//
//   ██████████████████░░░░░░░░░░░░░░░░░░░░  9/13 videos · ETA 1 min 20 s
//   this run: 7 done · 1 failed · 0 uncertain · 2 done before · 4 min 12 s
//   files:  hashing 0 · uploading 1 (3.2/12.0 MB) · speech 0 · downloading 1
//   jobs:   for a slot 3 · submitted 1 · Pending 2 · Running 2
//   waiting: 3 jobs for a slot: 4 of 4 generations in flight (--concurrency 4)
//     spring/intro                                      Running        42 s
import type pc from "picocolors";
import { formatDuration } from "../duration.js";
import { plural } from "./lines.js";
import {
  countPlaces,
  etaMs,
  HOLDING,
  type JobPlace,
  type JobView,
  type LiveState,
  totalsOf,
  workLeft,
} from "./live-state.js";

export type Colors = ReturnType<typeof pc.createColors>;

export interface FrameOptions {
  readonly now: number;
  /** The terminal's columns. */
  readonly width: number;
  readonly colors: Colors;
  /** Jobs listed by name at most. @defaultValue 5 */
  readonly maxJobs?: number;
  /** `watch`: the frame says so when it has no job yet. */
  readonly watching?: boolean;
}

/** Jobs listed first: those furthest along. */
const PLACE_ORDER: readonly JobPlace[] = [
  "downloading",
  "Running",
  "Pending",
  "PreProcessing",
  "submitting",
  "preparing",
];

/** Places of a job listed by name. */
const LISTED_WORDS: Partial<Record<JobPlace, string>> = {
  preparing: "preparing",
  submitting: "submitting",
  PreProcessing: "submitted",
  Pending: "Pending",
  Running: "Running",
  downloading: "downloading",
};

/** The ETA as shown: never "0 s" while work is left. */
const LEAST_SHOWN_MS = 100;

export function renderFrame(state: LiveState, o: FrameOptions): string[] {
  const c = o.colors;
  const width = Math.max(20, o.width);
  const totals = totalsOf(state);
  const lines: string[] = [];

  // The bar and the ETA: learned once a task of the service ended (in this run or before).
  let etaText = "";
  if (workLeft(state)) {
    const eta = etaMs(state, o.now);
    etaText = ` · ETA ${eta === undefined ? "learning" : formatDuration(Math.max(LEAST_SHOWN_MS, eta))}`;
  }
  const label =
    totals.total === 0 && o.watching
      ? "no videos yet"
      : `${totals.finished}/${plural(totals.total, "video")}${etaText}`;
  const barWidth = Math.max(10, Math.min(40, width - 1 - label.length - 2));
  const filled = totals.total === 0 ? 0 : Math.round((barWidth * totals.finished) / totals.total);
  const bar = c.green("█".repeat(filled)) + c.dim("░".repeat(barWidth - filled));
  lines.push(`${bar}  ${label}`);

  // This run's counts, and what was done before apart.
  const counts = [
    c.green(`${totals.done} done`),
    totals.failed > 0 ? c.red(c.bold(`${totals.failed} failed`)) : `${totals.failed} failed`,
    totals.uncertain > 0 ? c.yellow(`${totals.uncertain} uncertain`) : `${totals.uncertain} uncertain`,
    c.dim(
      `${totals.before} done before${totals.endedBefore > 0 ? `, ${totals.endedBefore} failed before` : ""}`,
    ),
    c.dim(formatDuration(o.now - state.startedAt)),
  ];
  lines.push(`${o.watching ? "this session" : "this run"}: ${counts.join(" · ")}`);

  // Per stage.
  const places = countPlaces(state);
  const count = (place: JobPlace): number => places[place];
  let uploadLabel = `uploading ${state.uploads.size}`;
  if (state.uploads.size > 0) {
    let sent = 0;
    let size = 0;
    for (const u of state.uploads.values()) {
      sent += u.sent;
      size += u.size;
    }
    uploadLabel += ` (${megabytes(sent)}/${megabytes(size)} MB)`;
  }
  lines.push(
    `files:  hashing ${state.hashing.size} · ${uploadLabel} · speech ${state.speaking.size} · downloading ${count("downloading")}`,
  );
  lines.push(
    `jobs:   for a slot ${count("queued")} · submitted ${count("submitting") + count("PreProcessing")} · Pending ${count("Pending")} · Running ${count("Running")}`,
  );

  // Why reel waits, when it does.
  for (const reason of waitReasons(state, o.now, count)) lines.push(c.yellow(reason));

  // The jobs furthest along, by name, with their place and how long they have been there.
  const maxJobs = o.maxJobs ?? 5;
  const inFlight = [...state.jobs, ...state.others].filter(
    ([, job]) => LISTED_WORDS[job.place] !== undefined,
  );
  inFlight.sort(([, a], [, b]) => order(a) - order(b) || a.since - b.since);
  const nameWidth = Math.max(10, width - 1 - 2 - 1 - 12 - 1 - 10);
  for (const [key, job] of inFlight.slice(0, maxJobs)) {
    const age = formatDuration(o.now - job.since).padStart(10);
    lines.push(
      `  ${cut(key, nameWidth).padEnd(nameWidth)} ${LISTED_WORDS[job.place]!.padEnd(12)} ${c.dim(age)}`,
    );
  }
  if (inFlight.length > maxJobs) lines.push(c.dim(`  … and ${inFlight.length - maxJobs} more in flight`));

  return lines.map((line) => fit(line, width - 1));
}

/** The frame's last state, left on screen when the display stops: the bar and the counts. */
export function renderFinal(state: LiveState, o: FrameOptions): string[] {
  return renderFrame(state, o).slice(0, 2);
}

function waitReasons(state: LiveState, now: number, count: (place: JobPlace) => number): string[] {
  const reasons: string[] = [];
  if (state.paused) {
    const left = state.paused.until === undefined ? 0 : state.paused.until - now;
    reasons.push(
      `paused: ${state.paused.detail}${left > 0 ? `; checking again in ${formatDuration(left)}` : ""}`,
    );
  }
  if (state.wait && state.wait.until > now) {
    reasons.push(`waiting ${formatDuration(state.wait.until - now)}: ${state.wait.detail}`);
  }
  const queued = count("queued");
  let holding = 0;
  for (const job of [...state.jobs.values(), ...state.others.values()]) if (HOLDING.has(job.place)) holding++;
  if (queued > 0 && holding >= state.concurrency) {
    reasons.push(
      `waiting: ${plural(queued, "job")} for a slot, ${holding} of ${state.concurrency} generations in flight (--concurrency ${state.concurrency})`,
    );
  }
  const pending = count("Pending");
  if (pending > 0) {
    reasons.push(`waiting: the service queues ${plural(pending, "task")} of this run (Pending)`);
  }
  return reasons;
}

function order(job: JobView): number {
  return PLACE_ORDER.indexOf(job.place);
}

function megabytes(bytes: number): string {
  return (bytes / 1_000_000).toFixed(1);
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** ANSI colour codes, which take no column (kept apart by split: the group). */
// eslint-disable-next-line no-control-regex -- the escape character is what is matched
const ANSI = /(\x1b\[[0-9;]*m)/;

/** The visible width of a line (its colour codes take none). */
export function visibleWidth(line: string): number {
  return line
    .split(ANSI)
    .filter((part, i) => i % 2 === 0)
    .join("").length;
}

/** `line` cut to `width` visible columns, ending with "…"; its colours are kept, then reset. */
function fit(line: string, width: number): string {
  if (visibleWidth(line) <= width) return line;
  let out = "";
  let shown = 0;
  const parts = line.split(ANSI);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out += part;
      return;
    }
    const room = width - 1 - shown;
    if (room <= 0) return;
    out += part.slice(0, room);
    shown += Math.min(room, part.length);
  });
  return parts.length > 1 ? `${out}…\x1b[0m` : `${out}…`;
}
