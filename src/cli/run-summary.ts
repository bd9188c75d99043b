// The end of `reel run`: how it ended, the jobs that need the user, what to do next, and where the
// results are (the real folders, the report). `--json` says the same as data, with each next step
// as a code (drivers/next-steps.ts).
import { budgetJson } from "../budget/index.js";
import { systemReason } from "../output/atomic-write.js";
import { join } from "node:path";
import { type JobResult, resultOf } from "../output/job-record.js";
import { REPORT_NAME, RESULTS_NAME } from "../output/layout.js";
import { ServiceError } from "../errors/service.js";
import { ADVISED_STOPS, nextSteps, stopCause } from "../drivers/next-steps.js";
import type { RunSummary } from "../drivers/run-summary.js";
import { type JobRow, versionKey } from "../state/job-store.js";
import { PIECE_CHARS } from "../report/pieces.js";
import { shownPath } from "../user-path.js";
import type { CliIO } from "./command.js";
import { EXIT } from "./exit-codes.js";
import type { ServiceSettings } from "./service-options.js";
import { workplaceJson } from "./workplace.js";

export interface RunEnd {
  readonly summary: RunSummary;
  readonly exitCode: number;
  readonly settings: ServiceSettings;
  readonly io: CliIO;
  readonly logFile: string;
  /** What loading the manifests found that did not stop the run: in --json beside the results. */
  readonly loadFindings?: { readonly warnings: readonly unknown[]; readonly skipped: readonly unknown[] };
  /** Media files hashed this run, and found in the hash cache: in --json and the log, for who tunes. */
  readonly hashing: { readonly hashed: number; readonly cached: number };
}

/** Jobs named one per line under the counts, at most this many (the rest are counted). */
const LISTED_JOBS = 20;

export async function printRunSummary(end: RunEnd): Promise<void> {
  const { summary, settings, io } = end;
  const resultOfRow = (row: JobRow): JobResult =>
    resultOf(row, summary.decisions?.get(versionKey(row.job_key, row.spec_hash)));
  // Counted by the run; only the jobs without their video are held (a big run's rows are not).
  const counts: Record<string, number> = { ...summary.counts };
  const notDone = summary.notDone.map(resultOfRow);
  const steps = nextSteps(summary);
  if (settings.json) {
    // Every job's result, as the document's last field: read from the store and written in pieces.
    const head = JSON.stringify({
      // As every command's JSON: `ok` is true when the exit code is 0; `error` is {code, message}.
      ok: end.exitCode === EXIT.ok,
      outcome: summary.outcome,
      error: summary.fatal ? { code: summary.fatal.code, message: summary.fatal.message } : null,
      counts,
      outDir: settings.outDir,
      ...workplaceJson(settings.place),
      report: join(settings.outDir, REPORT_NAME),
      nextSteps: steps,
      ...(summary.budget ? { budget: budgetJson(summary.budget.budget, summary.budget.left) } : {}),
      hashing: end.hashing,
      ...end.loadFindings,
    });
    let piece = `${head.slice(0, -1)},"results":[`;
    let first = true;
    for await (const row of summary.rows) {
      piece += `${first ? "" : ","}${JSON.stringify(resultOfRow(row))}`;
      first = false;
      if (piece.length >= PIECE_CHARS) {
        io.stdout.write(piece);
        piece = "";
      }
    }
    io.stdout.write(`${piece}]}\n`);
    return;
  }
  const shown = (path: string): string => shownPath(io.cwd, path);
  // Read by a person: a video generated but not on disk is not a success yet.
  const undownloaded = notDone.filter((r) => r.status === "Success" && r.file === null).length;
  const tally: Record<string, number> = { ...counts };
  if (undownloaded > 0) {
    tally.Success = (tally.Success ?? 0) - undownloaded;
    if (tally.Success === 0) delete tally.Success;
    tally["generated, not downloaded"] = undownloaded;
  }
  const { fatal } = summary;
  const outcome = fatal ? `stopped: ${stopCause(fatal.code)}` : summary.outcome;
  const lines = [
    `reel run: ${outcome}. ${
      Object.entries(tally)
        .map(([s, n]) => `${n} ${s}`)
        .join(", ") || "no jobs"
    }`,
  ];
  // After a stop, the jobs it left unsent carry its message: said once below, not once per job.
  const leftByStop = fatal ? notDone.filter((r) => r.status === "unsent") : [];
  if (leftByStop.length > 0) {
    const names = leftByStop.slice(0, LISTED_JOBS).map(keyOf).join(", ");
    const more = leftByStop.length > LISTED_JOBS ? ` and ${leftByStop.length - LISTED_JOBS} more` : "";
    lines.push(`  not sent, nothing paid for them: ${names}${more}`);
  }
  const needing = notDone.filter(
    (r) => !leftByStop.includes(r) && (r.error !== null || (r.status === "Success" && r.file === null)),
  );
  for (const r of needing.slice(0, LISTED_JOBS)) {
    lines.push(`  ${keyOf(r)}: ${r.status}: ${r.error ?? "not downloaded yet"}`);
  }
  if (needing.length > LISTED_JOBS) {
    lines.push(`  ... and ${needing.length - LISTED_JOBS} more (reel status, or the report)`);
  }
  if (fatal) lines.push(stopDetail(fatal));
  for (const step of steps) lines.push(step.text);
  const folders = [...summary.videos];
  if (folders.length > 0) {
    lines.push(
      `Videos: ${folders.map(([manifest, n]) => `${shown(join(settings.outDir, manifest))}/ (${n})`).join(", ")}`,
    );
  }
  lines.push(
    `Report: ${shown(join(settings.outDir, REPORT_NAME))} · results: ${shown(join(settings.outDir, RESULTS_NAME))}`,
  );
  lines.push(`Log: ${shown(end.logFile)}`);
  io.stderr.write(`${lines.join("\n")}\n`);
}

const keyOf = (r: JobResult): string => `${r.manifest}/${r.id}`;

/**
 * What stopped the run, as the service or the disk said it. A key or credits refusal's message ends
 * with the advice its next step gives: the service's own words alone, then.
 */
function stopDetail(fatal: NonNullable<RunSummary["fatal"]>): string {
  if (!ADVISED_STOPS.has(fatal.code) || !(fatal instanceof ServiceError)) return fatal.message;
  const status = fatal.status !== undefined ? ` with ${fatal.status}` : "";
  const words = fatal.serviceMessage !== undefined ? `: ${JSON.stringify(fatal.serviceMessage)}` : "";
  return `The service answered ${fatal.endpoint}${status}${words}.`;
}

/**
 * How long `--open` waits to learn whether the browser command failed: xdg-open on a machine without
 * a browser fails at once, while one that starts a browser may not return until the browser closes.
 */
const OPENER_GRACE_MS = 1_500;

/**
 * `--open`: the report in the user's browser ($BROWSER, else the desktop's opener). A machine without
 * one (a server, CI) gets a line saying so and where the report is, not an error: the run is done.
 */
export async function openReport(outDir: string, io: CliIO): Promise<void> {
  const file = join(outDir, REPORT_NAME);
  const opener =
    io.env.BROWSER ??
    (process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open");
  // Loaded here: child processes are no part of a run otherwise.
  const { spawn } = await import("node:child_process");
  const failure = await new Promise<string | undefined>((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(opener, [file], { detached: true, stdio: "ignore", env: { ...io.env } });
    } catch (error) {
      resolve(systemReason(error));
      return;
    }
    const timer = setTimeout(() => {
      child.unref(); // still running: a browser, most likely; the run does not wait for it
      resolve(undefined);
    }, OPENER_GRACE_MS);
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(error.code === "ENOENT" ? "not found" : systemReason(error));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : `exited with ${code === null ? signal : `code ${code}`}`);
    });
  });
  if (failure !== undefined) {
    io.stderr.write(
      `reel run: no browser opened the report (${opener}: ${failure}); open ${shownPath(io.cwd, file)} yourself.\n`,
    );
  }
}
