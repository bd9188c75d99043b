// OUT/.reel-journal.jsonl: an append-only journal of the submissions made through this output
// folder, the second copy of what was paid. The state file is the first; the records beside the
// videos (`<id>.json`, results.jsonl) are written only when a job ends or a run ends, so a state
// file emptied, deleted or rolled back (its -wal deleted) while tasks were in flight would leave no
// trace of them, and a rerun would pay for them again. With the journal, such a state is refused at
// start and rebuilt (recovery.ts): those tasks are followed, never paid for again.
//
// - One line per event, one write(2) each, on a descriptor opened O_APPEND; no fsync. A process
//   crash loses nothing already written; a power cut is the state file's business (it fsyncs each
//   intent before the request leaves). A line is a few hundred bytes and two per submission: a run
//   of 10,000 jobs spends about 20,000 system calls of a few microseconds on it.
// - One file per output folder, at its root (not per manifest folder): one descriptor, one read at
//   start, and the folder's lock (out-dir.ts) makes one engine its only writer. Each line names the
//   state file (its real path) and the service it belongs to, because one state file may serve
//   several output folders and services, and several state files may take turns on one folder: each
//   reads only its own lines.
// - Kept short: when an engine ends, the lines of job versions the state file shows finished
//   (whose records are written) are dropped, the file rewritten atomically (see compactJournal).
import {
  closeSync,
  constants,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { tempPathFor } from "./atomic-write.js";
import { JOURNAL_NAME } from "./layout.js";

/** Whose lines: a state file (its real path) and a service (its canonical base URL) in it. */
export interface JournalScope {
  readonly state: string;
  readonly service: string;
}

/** The job version a line is about. */
export interface JournalJob {
  readonly manifest: string;
  readonly id: string;
  readonly specHash: string;
  readonly model: string;
  readonly seconds: number;
}

/**
 * A line as written. `e`: "sent" (the intent, written after the state's durable intent and before
 * the request leaves), "task" (the service's answer), "none" (the service refused for certain:
 * nothing was created, nothing paid). A "sent" with neither after it is an unknown outcome.
 */
interface Line {
  readonly e: "sent" | "task" | "none";
  readonly st: string;
  readonly svc: string;
  readonly m: string;
  readonly v: string;
  readonly h: string;
  /** The attempt (the state's `attempts` once the intent is written). */
  readonly a: number;
  readonly at: string;
  readonly model?: string;
  readonly s?: number;
  readonly task?: string;
}

/** What the journal shows of one job version: its latest submission and what came of it. */
export interface JournaledJob {
  readonly manifest: string;
  readonly id: string;
  readonly specHash: string;
  readonly model: string;
  readonly seconds: number;
  readonly attempt: number;
  readonly sentAt: string;
  /** "task": answered with `taskId`; "none": refused for certain; "unknown": no answer written. */
  readonly outcome: "task" | "none" | "unknown";
  readonly taskId: string | null;
  readonly answeredAt: string | null;
}

export interface JournalWriter {
  /**
   * Before a submission leaves (its intent already durable in the state file). Throws if the line
   * cannot be written: the request must then not be sent, or a lost state would not show it.
   */
  sent(job: JournalJob, attempt: number): void;
  /** The task the service made. Best effort: a lost answer line leaves the job uncertain, not paid twice. */
  answered(job: JournalJob, attempt: number, taskId: string): void;
  /** The service refused the submission for certain: nothing was created. Best effort. */
  notCreated(job: JournalJob, attempt: number): void;
  close(): void;
}

/** No journal: the runners of a shared store, whose every write is committed before it resolves. */
export const NO_JOURNAL: JournalWriter = { sent() {}, answered() {}, notCreated() {}, close() {} };

export const journalPath = (outDir: string): string => join(outDir, JOURNAL_NAME);
const versionOf = (manifest: string, id: string, specHash: string): string =>
  `${manifest}/${id}\n${specHash}`;

/** Opens the journal of `outDir` for appending (the caller holds the folder's lock). */
export function openJournal(outDir: string, scope: JournalScope): JournalWriter {
  // O_NOFOLLOW: never through a link planted at the journal's name.
  const fd = openSync(
    journalPath(outDir),
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o644,
  );
  let open = true;
  const line = (e: Line["e"], job: JournalJob, attempt: number, extra: Partial<Line>): string =>
    `${JSON.stringify({
      e,
      st: scope.state,
      svc: scope.service,
      m: job.manifest,
      v: job.id,
      h: job.specHash,
      a: attempt,
      at: new Date().toISOString(),
      ...extra,
    } satisfies Line)}\n`;
  const tryAppend = (text: string): void => {
    try {
      if (open) writeSync(fd, text);
    } catch {
      // See `answered`: the state file has this answer; the journal only backs it up.
    }
  };
  return {
    sent(job, attempt) {
      writeSync(fd, line("sent", job, attempt, { model: job.model, s: job.seconds }));
    },
    answered(job, attempt, taskId) {
      tryAppend(line("task", job, attempt, { task: taskId }));
    },
    notCreated(job, attempt) {
      tryAppend(line("none", job, attempt, {}));
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** Bytes read, and written, at a time: a journal of 100,000 jobs is some 60 MB, never held whole. */
const PIECE_BYTES = 1 << 20;

/** The lines of the journal of `outDir` (none when there is none yet), read a piece at a time. */
function* journalLines(outDir: string): Generator<string> {
  let fd: number;
  try {
    fd = openSync(journalPath(outDir), "r");
  } catch {
    return; // none yet
  }
  try {
    const buffer = Buffer.allocUnsafe(PIECE_BYTES);
    let rest = Buffer.alloc(0); // a line begun in the previous piece
    for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) {
      const piece = rest.length > 0 ? Buffer.concat([rest, buffer.subarray(0, n)]) : buffer.subarray(0, n);
      let start = 0;
      // A newline byte is never part of a multi-byte UTF-8 character: each line decodes whole.
      for (let end = piece.indexOf(10, start); end !== -1; end = piece.indexOf(10, start)) {
        yield piece.toString("utf8", start, end);
        start = end + 1;
      }
      rest = Buffer.from(piece.subarray(start)); // a copy: `buffer` is read into again
    }
    if (rest.length > 0) yield rest.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

function parse(text: string): Line | undefined {
  if (text === "") return undefined;
  try {
    const line = JSON.parse(text) as Line;
    return typeof line === "object" && line !== null && typeof line.m === "string" ? line : undefined;
  } catch {
    return undefined; // a line cut short by a full disk
  }
}

const inScope = (line: Line, scope: JournalScope): boolean =>
  line.st === scope.state && line.svc === scope.service;

/** Every job version the journal of `outDir` shows for `scope`, with its latest submission. */
export function readJournal(outDir: string, scope: JournalScope): JournaledJob[] {
  const found = new Map<string, JournaledJob>();
  for (const text of journalLines(outDir)) {
    const line = parse(text);
    if (!line || !inScope(line, scope)) continue;
    const key = versionOf(line.m, line.v, line.h);
    const known = found.get(key);
    if (line.e === "sent") {
      if (known && known.attempt > line.a) continue;
      found.set(key, {
        manifest: line.m,
        id: line.v,
        specHash: line.h,
        model: line.model ?? "",
        seconds: line.s ?? 0,
        attempt: line.a,
        sentAt: line.at,
        outcome: "unknown",
        taskId: null,
        answeredAt: null,
      });
    } else if (known && known.attempt === line.a) {
      found.set(key, {
        ...known,
        outcome: line.e,
        taskId: line.e === "task" ? (line.task ?? null) : null,
        answeredAt: line.at,
      });
    }
  }
  return [...found.values()];
}

/**
 * Rewrites the journal of `outDir` without the lines of `scope` whose job version `finished` says
 * is done with (final in the state file at or after the journal's latest attempt, its record
 * written): the records hold those now. The lines of other state files and services are kept.
 * Atomic (temp file, fsync, rename), under the folder's lock; nothing is rewritten when nothing
 * would be dropped.
 */
export async function compactJournal(
  outDir: string,
  scope: JournalScope,
  finished: (manifest: string, id: string, specHash: string, attempt: number) => Promise<boolean>,
): Promise<void> {
  // Read twice, a piece at a time: first what each line is about (its job version's number, for the
  // lines of `scope`), then, once the finished versions are known, the lines kept are written.
  const numbers = new Map<string, number>(); // version -> its number
  const versions: { m: string; v: string; h: string; a: number }[] = []; // by number, latest attempt
  const lineOf: number[] = []; // per line: its version's number, OTHER_SCOPE, or CUT_SHORT
  for (const text of journalLines(outDir)) {
    const line = parse(text);
    if (!line) lineOf.push(CUT_SHORT);
    else if (!inScope(line, scope)) lineOf.push(OTHER_SCOPE);
    else {
      const key = versionOf(line.m, line.v, line.h);
      let n = numbers.get(key);
      if (n === undefined) {
        numbers.set(key, (n = versions.length));
        versions.push({ m: line.m, v: line.v, h: line.h, a: line.a });
      } else if (line.a >= versions[n]!.a) versions[n]!.a = line.a;
      lineOf.push(n);
    }
  }
  numbers.clear();
  const done = new Uint8Array(versions.length);
  let dropped = 0;
  for (const [n, { m, v, h, a }] of versions.entries()) {
    if (await finished(m, v, h, a)) {
      done[n] = 1;
      dropped++;
    }
  }
  if (dropped === 0) return;
  const path = journalPath(outDir);
  const temp = tempPathFor(path);
  const fd = openSync(temp, "wx", 0o644);
  try {
    let piece = "";
    let i = 0;
    for (const text of journalLines(outDir)) {
      // A line past those read first (none: the folder's lock keeps other writers out) is kept.
      const n = lineOf[i++] ?? OTHER_SCOPE;
      if (n === CUT_SHORT || (n >= 0 && done[n] === 1)) continue;
      piece += `${text}\n`;
      if (piece.length >= PIECE_BYTES) {
        writeSync(fd, piece);
        piece = "";
      }
    }
    if (piece !== "") writeSync(fd, piece);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  closeSync(fd);
  renameSync(temp, path);
}

const OTHER_SCOPE = -1;
const CUT_SHORT = -2;
