// The live display's frame: a pure function from what is known (live-state.ts) and the clock to the
// lines drawn, each within the terminal's width: a line the terminal wrapped itself would break the
// redraw in place, so a long one is broken here, between its parts or at a word, never cut. (A job's
// name alone is cut, with "…", to keep the list's columns.)
//
//   ██████████████████░░░░░░░░░░░░░░░░░░░░  9/13 videos · ETA 1 min 20 s
//   this run: 7 done · 1 failed · 0 uncertain · 2 done before · 4 min 12 s
//   jobs:   waiting 0 · preparing 0 · for a slot 3
//           submitted 1 · Pending 2 · Running 1 · downloading 1
//   files:  hashing 0 · uploading 1 (3.2/12.0 MB) · speech 0
//   fleet:  3 runners · in flight 16 of 16, 4 here · done 27/40, 9 here
//   waiting: 3 jobs for a slot, 4 of 4 generations in flight (--concurrency 4)
//     spring/intro                                      Running        42 s
//
// Every job of the run is counted once: in this run's counts (done, failed, uncertain, what ended
// before, and in a fleet what other runners made meanwhile), or in one of the jobs' places; the
// counts add up to the videos of the bar. A watch's session counts also hold what it made of
// versions since edited (work it paid for). The fleet's line (a shared store only) says what all
// runners of the account do: the runners alive, the generations in flight against the account's
// bound, and the run's videos made by any runner; "here" is this runner's share.
import { FLEET_FULL } from "../engine/progress.js";
import type pc from "picocolors";
import { formatDuration } from "../duration.js";
import { plural } from "../plural.js";
import { visibleWidth, wrapLine } from "./text-wrap.js";
import { HOLDING, type JobPlace, type JobView, type LiveState } from "./live-state.js";
import { countPlaces, etaMs, totalsOf, workLeft } from "./live-readings.js";

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
  // A line as wide as the terminal would leave the cursor past its edge: one column spare.
  const room = width - 1;
  const lines = headOf(state, o, room);

  // Every job not ended, in one place each: on this side (not taken up yet, its files being made
  // ready, waiting for a generation slot, left for another run), then at the service and after.
  const places = countPlaces(state);
  const count = (place: JobPlace): number => places[place];
  lines.push(
    ...flow(
      "jobs:   ",
      [
        `waiting ${count("waiting")}`,
        `preparing ${count("preparing")}`,
        `for a slot ${count("queued")}`,
        ...(count("left") > 0 ? [c.yellow(`left ${count("left")}`)] : []),
      ],
      room,
    ),
    ...flow(
      JOBS_INDENT,
      [
        `submitted ${count("submitting") + count("PreProcessing")}`,
        `Pending ${count("Pending")}`,
        `Running ${count("Running")}`,
        `downloading ${count("downloading")}`,
      ],
      room,
    ),
  );

  // The files (one may serve many jobs).
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
    ...flow(
      "files:  ",
      [`hashing ${state.hashing.size}`, uploadLabel, `speech ${state.speaking.size}`],
      room,
    ),
  );

  if (state.fleet) lines.push(...fleetLines(state, room));

  // Why reel waits, when it does.
  for (const reason of waitReasons(state, o.now, count)) {
    lines.push(...wrapLine(reason, room, { indent: 2 }).map((line) => c.yellow(line)));
  }

  // The jobs furthest along, by name, with their place and how long they have been there.
  const maxJobs = o.maxJobs ?? 5;
  const inFlight = [...state.jobs, ...state.others].filter(
    ([, job]) => LISTED_WORDS[job.place] !== undefined,
  );
  inFlight.sort(([, a], [, b]) => order(a) - order(b) || a.since - b.since);
  const nameWidth = Math.max(10, room - 2 - 1 - 12 - 1 - 10);
  for (const [key, job] of inFlight.slice(0, maxJobs)) {
    const age = formatDuration(o.now - job.since).padStart(10);
    lines.push(
      `  ${cut(key, nameWidth).padEnd(nameWidth)} ${LISTED_WORDS[job.place]!.padEnd(12)} ${c.dim(age)}`,
    );
  }
  if (inFlight.length > maxJobs) lines.push(c.dim(`  … and ${inFlight.length - maxJobs} more in flight`));
  return lines;
}

/** The frame's last state, left on screen when the display stops: the bar and this run's counts. */
export function renderFinal(state: LiveState, o: FrameOptions): string[] {
  return headOf(state, o, Math.max(20, o.width) - 1);
}

/** The bar with the ETA, and this run's counts apart from what ended before it. */
function headOf(state: LiveState, o: FrameOptions, room: number): string[] {
  const c = o.colors;
  const totals = totalsOf(state);
  // The ETA: learned once a task of the service ended (in this run or before).
  let etaText = "";
  if (workLeft(state)) {
    const eta = etaMs(state, o.now);
    etaText = ` · ETA ${eta === undefined ? "learning" : formatDuration(Math.max(LEAST_SHOWN_MS, eta))}`;
  }
  const label =
    totals.total === 0 && o.watching
      ? "no videos yet"
      : `${totals.finished}/${plural(totals.total, "video")}${etaText}`;
  const barWidth = Math.max(10, Math.min(40, room - label.length - 2));
  const filled = totals.total === 0 ? 0 : Math.round((barWidth * totals.finished) / totals.total);
  const bar = c.green("█".repeat(filled)) + c.dim("░".repeat(barWidth - filled));
  const lines = wrapLine(`${bar}  ${label}`, room);

  const places = countPlaces(state);
  const before = [`${totals.before} done before`];
  if (places.failedBefore > 0) before.push(`${places.failedBefore} failed before`);
  if (places.uncertainBefore > 0) before.push(`${places.uncertainBefore} uncertain before`);
  const counts = [
    c.green(`${totals.done} done`),
    totals.failed > 0 ? c.red(c.bold(`${totals.failed} failed`)) : `${totals.failed} failed`,
    totals.uncertain > 0 ? c.yellow(`${totals.uncertain} uncertain`) : `${totals.uncertain} uncertain`,
    c.dim(before.join(", ")),
    ...(totals.elsewhere > 0 ? [c.dim(`${totals.elsewhere} by other runners`)] : []),
    c.dim(formatDuration(o.now - state.startedAt)),
  ];
  lines.push(...flow(o.watching ? "this session: " : "this run: ", counts, room));
  return lines;
}

/** The jobs' second line starts under the first's counts. */
const JOBS_INDENT = " ".repeat(8);

/**
 * `label` and `parts` joined by " · ", in as many lines as `room` needs, broken between parts; the
 * lines after the first start under the first part.
 */
function flow(label: string, parts: readonly string[], room: number): string[] {
  const indent = " ".repeat(visibleWidth(label));
  const lines: string[] = [];
  let line = label;
  let empty = true;
  for (const part of parts) {
    const joined = empty ? `${line}${part}` : `${line} · ${part}`;
    if (!empty && visibleWidth(joined) > room) {
      lines.push(line);
      line = `${indent}${part}`;
    } else line = joined;
    empty = false;
  }
  lines.push(line);
  return lines.flatMap((l) => wrapLine(l, room, { indent: indent.length }));
}

function waitReasons(state: LiveState, now: number, count: (place: JobPlace) => number): string[] {
  const reasons: string[] = [];
  if (state.paused) {
    const left = state.paused.until === undefined ? 0 : state.paused.until - now;
    reasons.push(
      `paused: ${state.paused.detail}${left > 0 ? `; checking again in ${formatDuration(left)}` : ""}`,
    );
  }
  // The fleet's bound, with its numbers once the fleet was read: said while it holds jobs back.
  const fleetFull = state.fleet !== undefined && count("queued") > 0 && fleetIsFull(state.fleet);
  if (fleetFull) {
    const f = state.fleet!;
    reasons.push(
      `waiting: ${FLEET_FULL} (${f.inFlight + f.uncertainHeld} of ${f.bound}, ${plural(f.runners, "runner")})`,
    );
  }
  if (state.wait && state.wait.until > now && !(fleetFull && state.wait.detail === FLEET_FULL)) {
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

function fleetIsFull(f: NonNullable<LiveState["fleet"]>): boolean {
  return f.bound > 0 && f.inFlight + f.uncertainHeld >= f.bound;
}

/** The fleet's line: its runners, its generations in flight, the run's videos made by any runner. */
function fleetLines(state: LiveState, room: number): string[] {
  const f = state.fleet!;
  const totals = totalsOf(state);
  const made = totals.done + totals.before + totals.elsewhere;
  const parts = [
    plural(f.runners, "runner"),
    `in flight ${f.inFlight}${f.bound > 0 ? ` of ${f.bound}` : ""}, ${f.mine} here`,
    `done ${made}/${totals.total}, ${totals.done} here`,
  ];
  if (f.uncertainHeld > 0) parts.push(`${f.uncertainHeld} uncertain holding a slot`);
  return flow("fleet:  ", parts, room);
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
