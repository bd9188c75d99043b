// `reel run PATH...`: validate every manifest (nothing is sent if one is invalid), then drive every
// job to a final state, resuming from the state file; print a summary and exit with PRODUCT.md's codes.
import { SentElsewhereError } from "../engine/sent-elsewhere.js";
import { type ReportCode, UsageError } from "../errors.js";
import { checkAllowRead, formatProblems, loadManifests, makeJobFilter, onlyHint } from "../manifest/index.js";
import { resultOf } from "../output/job-record.js";
import { runBatch, type RunSummary } from "../run/run-batch.js";
import { shownPath } from "../user-path.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { readHashCacheUnlocked } from "./hash-cache.js";
import { readServiceSettings } from "./service-options.js";
import { refusalOf, WORK_OPTIONS, WORK_USAGE, withWorkSession } from "./work-session.js";

const USAGE = `Usage: reel run PATH... [options]

PATH: manifest files or folders of *.yaml / *.yml.

Options:
  --only GLOB            run only jobs whose manifest/id matches (repeatable), e.g. 'spring/*'
${WORK_USAGE}

Exit codes: 0 all succeeded, 1 some job failed or is uncertain, 2 invalid input (nothing sent),
3 stopped by the service (rejected key, no credits), no service answering at the address, or the
output folder's disk full or failing (a rerun resumes), 130 interrupted.`;

export const runCommand: Command = {
  name: "run",
  summary: "process every job to a final state, resuming from the state file",
  usage: USAGE,
  options: {
    ...WORK_OPTIONS,
    only: { type: "string", multiple: true },
  },
  run: runRun,
};

function strings(values: ParsedArgs["values"], name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

async function runRun(args: ParsedArgs, io: CliIO): Promise<number> {
  const settings = readServiceSettings(args, io, true);
  if (args.positionals.length === 0) throw new UsageError("give at least one manifest file or folder");
  const allowRead = strings(args.values, "allow-read");
  await checkAllowRead(allowRead, io.cwd);
  // Validated before the state file is locked, the log file opened or the sandbox started: an
  // invalid manifest is refused alike whether or not another reel holds the state file.
  const hashes = readHashCacheUnlocked(settings.statePath);
  let loaded: Awaited<ReturnType<typeof loadManifests>>;
  try {
    loaded = await loadManifests(args.positionals, { cwd: io.cwd, allowRead, hashFile: hashes.hasher });
  } finally {
    hashes.closeReader();
  }
  if (loaded.problems.length > 0) {
    const tty = io.stderr.isTTY === true;
    io.stderr.write(`${formatProblems(loaded.problems, { color: tty, codeFrame: tty })}\n`);
    io.stderr.write(`reel run: ${loaded.problems.length} problem(s); nothing was sent.\n`);
    if (settings.json) {
      const error = {
        code: "E_INVALID" satisfies ReportCode,
        message: `${loaded.problems.length} problem(s); nothing was sent`,
      };
      io.stdout.write(
        `${JSON.stringify({ ok: false, outcome: "invalid", error, problems: loaded.problems })}\n`,
      );
    }
    return EXIT.invalidInput;
  }
  const only = strings(args.values, "only");
  const filter = makeJobFilter(only);
  const allJobs = loaded.manifests.flatMap((m) => m.jobs);
  const jobs = allJobs.filter((job) => filter(job.key));
  if (only.length > 0 && jobs.length === 0) {
    throw new UsageError(`--only ${only.join(", ")} matches no job${onlyHint(only)}`);
  }
  return withWorkSession("run", settings, args, io, async (session) => {
    hashes.saveTo(session.store);
    const refusal = refusalOf(settings, args, session.store)(jobs);
    if (refusal !== undefined) throw new SentElsewhereError(refusal);
    const summary = await runBatch({
      ...session.engine,
      jobs,
      listedJobs: allJobs,
      service: settings.sandbox ? "sandbox" : settings.baseUrl!,
    });
    const code = exitCodeOf(summary);
    printSummary(summary, code, settings.outDir, settings.json, io, session.logFile, hashes.hasher.stats);
    return code;
  });
}

export function exitCodeOf(summary: RunSummary): number {
  if (summary.outcome === "fatal") return EXIT.fatalService;
  if (summary.outcome === "interrupted") return EXIT.interrupted;
  const allDone = summary.rows.every((row) => row.state === "Success" && row.file !== null);
  return allDone ? EXIT.ok : EXIT.someJobsFailed;
}

function printSummary(
  summary: RunSummary,
  exitCode: number,
  outDir: string,
  json: boolean,
  io: CliIO,
  logFile: string,
  hashing: { hashed: number; cached: number },
): void {
  const results = summary.rows.map(resultOf);
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  if (json) {
    io.stdout.write(
      `${JSON.stringify({
        // As every command's JSON: `ok` is true when the exit code is 0; `error` is {code, message}.
        ok: exitCode === EXIT.ok,
        outcome: summary.outcome,
        error: summary.fatal ? { code: summary.fatal.code, message: summary.fatal.message } : null,
        counts,
        outDir,
        results,
      })}\n`,
    );
    return;
  }
  const out = shownPath(io.cwd, outDir);
  // Read by a person: a video generated but not on disk is not a success yet.
  const undownloaded = results.filter((r) => r.status === "Success" && r.file === null).length;
  const shown: Record<string, number> = { ...counts };
  if (undownloaded > 0) {
    shown.Success = (shown.Success ?? 0) - undownloaded;
    if (shown.Success === 0) delete shown.Success;
    shown["generated, not downloaded"] = undownloaded;
  }
  const lines = [
    `reel run: ${summary.outcome}. ${Object.entries(shown)
      .map(([s, n]) => `${n} ${s}`)
      .join(", ")}`,
  ];
  for (const r of results.filter((r) => r.error !== null || (r.status === "Success" && r.file === null))) {
    lines.push(`  ${r.manifest}/${r.id}: ${r.status}: ${r.error ?? "not downloaded yet"}`);
  }
  if (summary.fatal) lines.push(summary.fatal.message);
  if (summary.outcome === "interrupted") {
    lines.push(
      "Interrupted: tasks already submitted keep running on the service; rerun the same command to resume.",
    );
  }
  if (summary.outcome === "incomplete") {
    lines.push(
      "Some jobs are not finished yet; rerun the same command to go on (nothing is submitted twice).",
    );
  }
  if (undownloaded > 0) {
    lines.push("Rerun the same command to download the videos not downloaded: nothing is generated again.");
  }
  if (results.some((r) => r.status === "uncertain")) {
    lines.push(
      "Uncertain jobs: a paid request (the submission, or speech it needs) may have reached the service without an answer. Check the service's console; rerun with --resubmit-uncertain to send it again (it may be paid twice).",
    );
  }
  lines.push(
    `Videos: ${out}/<manifest>/<id>.mp4 · results: ${out}/results.jsonl · log: ${shownPath(io.cwd, logFile)}`,
  );
  lines.push(`Files hashed: ${hashing.hashed} (cached: ${hashing.cached})`);
  io.stderr.write(`${lines.join("\n")}\n`);
}
