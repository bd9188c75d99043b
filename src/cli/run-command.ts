// `reel run PATH...`: validate every manifest (nothing is sent if one is invalid), then drive every
// job to a final state, resuming from the state file; print a summary and exit with the README's codes.
import { existsSync } from "node:fs";
import { type Budget, endBudgetScope, runScope } from "../budget/index.js";
import { SentElsewhereError } from "../errors/engine.js";
import type { ReportCode } from "../errors/reel-error.js";
import { UsageError } from "../errors/usage.js";
import {
  checkAllowRead,
  formatProblems,
  loadManifests,
  makeJobFilter,
  mergeFindings,
  type NormalizedManifest,
  onlyHint,
} from "../manifest/index.js";
import { runBatch } from "../drivers/run-batch.js";
import type { RunSummary } from "../drivers/run-summary.js";
import { openReport, printRunSummary } from "./run-summary.js";
import {
  BUDGET_OPTIONS,
  budgetUsage,
  checkPriced,
  openSessionBudget,
  readBudgetRequest,
} from "./budget-options.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { readHashCacheUnlocked } from "./hash-cache.js";
import { readingManifests } from "./heap.js";
import { staleRetakeLines, withRetakes } from "../review/retake.js";
import { readServiceSettings, type ServiceSettings } from "./service-options.js";
import {
  exitCodeWithSkipped,
  goesOnDespite,
  SKIP_INVALID_OPTION,
  SKIP_INVALID_USAGE,
  skippedLine,
  skippedManifests,
  skippedReminder,
  skipInvalidHint,
} from "./skip-invalid.js";
import { maxVideosOf } from "./max-videos.js";
import { problemsText, writeProblems } from "./validate-command.js";
import { checkWorkplace, withProjectRoot, type Workplace, workplaceLine, workplaceOf } from "./workplace.js";
import { WORK_OPTIONS, WORK_USAGE } from "./work-options.js";
import { refusalOf, withWorkSession, type WorkSession } from "./work-session.js";

const USAGE = `Usage: reel run PATH... [options]

PATH: manifest files or folders of *.yaml / *.yml.

Options:
  --only GLOB            run only jobs whose manifest/id matches (repeatable), e.g. 'spring/*'
  --open                 open the report (OUT/index.html) in the browser at the end ($BROWSER, else
                         the desktop's default)
${SKIP_INVALID_USAGE}
${budgetUsage("run")}
${WORK_USAGE}

Exit codes: 0 all succeeded, 1 some job failed or is uncertain, or --skip-invalid skipped a
manifest, 2 invalid input (nothing sent),
3 stopped by the service (rejected key, no credits), no service answering at the address, the
output folder's disk full or failing, or stopped before spending more at --max-seconds /
--max-credits (a rerun resumes; with a higher cap, it goes on), 130 interrupted.`;

export const runCommand: Command = {
  name: "run",
  usage: USAGE,
  options: {
    ...WORK_OPTIONS,
    ...BUDGET_OPTIONS,
    ...SKIP_INVALID_OPTION,
    only: { type: "string", multiple: true },
    open: { type: "boolean" },
  },
  run: runRun,
};

function strings(values: ParsedArgs["values"], name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

async function runRun(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length === 0) throw new UsageError("give at least one manifest file or folder");
  const place = workplaceOf(args.positionals, args, io);
  const settings = readServiceSettings(args, io, true, place);
  io.stderr.write(`reel run: ${workplaceLine(place, io.cwd, existsSync(place.statePath))}\n`);
  const allowRead = strings(args.values, "allow-read");
  await checkAllowRead(allowRead, io.cwd);
  // Validated before the state file is locked, the log file opened or the sandbox started: an
  // invalid manifest is refused alike whether or not another reel holds the state file.
  const hashes = await readHashCacheUnlocked(settings.statePath, settings.storeUrl);
  let loaded: Awaited<ReturnType<typeof loadManifests>> | undefined;
  try {
    loaded = await readingManifests(() =>
      loadManifests(args.positionals, {
        cwd: io.cwd,
        allowRead: withProjectRoot(allowRead, place),
        hashFile: hashes.hasher,
        maxVideos: maxVideosOf(args, io, place.project),
      }),
    );
  } finally {
    await hashes.closeReader();
  }
  const skipInvalid = goesOnDespite(loaded, args.values["skip-invalid"]);
  if (loaded.problems.length > 0 && !skipInvalid) {
    const tty = io.stderr.isTTY === true;
    const findings = mergeFindings(loaded.problems, loaded.warnings);
    io.stderr.write(`${formatProblems(findings, { color: tty, codeFrame: tty })}\n`);
    io.stderr.write(`reel run: ${problemsText(loaded.problems)}; nothing was sent.\n`);
    if (loaded.manifests.length > 0) io.stderr.write(`${skipInvalidHint(loaded.manifests.length)}\n`);
    if (settings.json) {
      const error = {
        code: "E_INVALID" satisfies ReportCode,
        message: `${problemsText(loaded.problems)}; nothing was sent`,
      };
      const { problems, warnings } = loaded;
      io.stdout.write(`${JSON.stringify({ ok: false, outcome: "invalid", error, problems, warnings })}\n`);
    }
    return EXIT.invalidInput;
  }
  // Said before anything starts: an invalid manifest skipped, a text YAML reads otherwise.
  const skipped = skipInvalid ? skippedManifests(loaded) : [];
  writeProblems(loaded.problems, io, "run", loaded.warnings);
  if (skipped.length > 0) io.stderr.write(`${skippedLine("run", skipped)}\n`);
  checkWorkplace(place, loaded.manifests, io.cwd);
  const { warnings } = loaded;
  // The manifests are let go once the run has their jobs (see startRun).
  const handed: { manifests?: readonly NormalizedManifest[] } = { manifests: loaded.manifests };
  loaded = undefined;
  return withWorkSession("run", settings, args, io, async (session) => {
    const { run, budget, scope } = await startRun(session, handed, { args, io, place, settings, hashes });
    const summary = await run;
    // The work of these manifests is done: the next capped run of them counts from nothing.
    if (summary.outcome === "completed" || summary.outcome === "incomplete")
      await endBudgetScope(session.store, budget?.session.scope ?? scope);
    const code = exitCodeWithSkipped(exitCodeOf(summary), skipped);
    session.events.end(summary.outcome, code);
    await printRunSummary({
      summary,
      exitCode: code,
      settings,
      io,
      // The load's findings, in the JSON document too.
      loadFindings: { warnings, skipped },
      logFile: session.logFile,
      hashing: hashes.hasher.stats,
    });
    if (skipped.length > 0 && !settings.json) io.stderr.write(`${skippedReminder(skipped)}\n`);
    if (args.values.open === true && !settings.json) await openReport(settings.outDir, io);
    return code;
  });
}

/** What startRun reads besides the manifests. */
interface RunInputs {
  readonly args: ParsedArgs;
  readonly io: CliIO;
  readonly place: Workplace;
  readonly settings: ServiceSettings;
  readonly hashes: Pick<Awaited<ReturnType<typeof readHashCacheUnlocked>>, "saveTo">;
}

/**
 * Checks the run's jobs (--only, the budget, another runner's) and hands them to runBatch; resolves
 * with the run under way. The job lists live in this call alone: held for the whole run, 100,000
 * jobs were some 50 MB.
 */
async function startRun(
  session: WorkSession,
  handed: { manifests?: readonly NormalizedManifest[] },
  { args, io, place, settings, hashes }: RunInputs,
): Promise<{ run: Promise<RunSummary>; budget: Budget | undefined; scope: string }> {
  // Retakes queued (reel retake) are jobs of their manifests, sent by this run, once: read through the
  // run's own store, which rides out a PostgreSQL store that does not answer yet (a reader would
  // fail at once), so they are checked with --only and the budget below, before anything is sent.
  const retaken = await withRetakes(session.store, handed.manifests!);
  handed.manifests = undefined;
  for (const line of staleRetakeLines(retaken.stale)) io.stderr.write(`reel run: ${line}\n`);
  const only = strings(args.values, "only");
  const filter = makeJobFilter(only);
  const allJobs = retaken.manifests.flatMap((m) => m.jobs);
  const jobs = allJobs.filter((job) => filter(job.key));
  if (only.length > 0 && jobs.length === 0) {
    throw new UsageError(`--only ${only.join(", ")} matches no job${onlyHint(only)}`);
  }
  const scope = runScope(
    jobs.map((job) => job.manifest),
    only,
  );
  const budgetRequest = readBudgetRequest(args, io, place, scope);
  checkPriced(budgetRequest, jobs);
  await hashes.saveTo(session.store);
  const refusal = await refusalOf(settings, args, session.store)(jobs);
  if (refusal !== undefined) throw new SentElsewhereError(refusal);
  const budget = await openSessionBudget("run", session, budgetRequest, io, jobs);
  const run = runBatch({
    ...session.engine,
    ...(budget ? { budget } : {}),
    jobs,
    listedJobs: allJobs,
    service: settings.sandbox ? "sandbox" : settings.baseUrl!,
  });
  return { run, budget, scope };
}

export function exitCodeOf(summary: RunSummary): number {
  if (summary.outcome === "fatal") return EXIT.fatalService;
  if (summary.outcome === "capped") return EXIT.budgetReached;
  if (summary.outcome === "interrupted") return EXIT.interrupted;
  return summary.notDone.length === 0 ? EXIT.ok : EXIT.someJobsFailed;
}
