// `reel watch DIR`: run what lands in a folder of manifests until SIGINT/SIGTERM (exit 0).
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { describeStop, endBudgetScope, watchScope } from "../budget/index.js";
import { parseDuration } from "../duration.js";
import { DEFAULTS } from "../defaults.js";
import { UsageError } from "../errors/usage.js";
import { checkAllowRead } from "../manifest/index.js";
import { realPathOf } from "../real-path.js";
import { watchFolder } from "../watch/watch-folder.js";
import { BUDGET_OPTIONS, budgetUsage, openSessionBudget, readBudgetRequest } from "./budget-options.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { passedOverMessage } from "./passed-over-states.js";
import { maxVideosOf } from "./max-videos.js";
import { readServiceSettings } from "./service-options.js";
import { withProjectRoot, workplaceLine, workplaceOf } from "./workplace.js";
import { WORK_OPTIONS, WORK_USAGE } from "./work-options.js";
import { refusalOf, withWorkSession } from "./work-session.js";

const USAGE = `Usage: reel watch DIR [options]

Runs every manifest (*.yaml, *.yml, in DIR and below) as it lands or changes: new and changed
videos are submitted, unchanged ones are left alone, videos removed before they were submitted
are dropped. Invalid manifests are reported and skipped until fixed. A rejected key or exhausted
credits pause the work (checked again with backoff) instead of stopping it. Ctrl-C stops cleanly;
starting again resumes, including manifests that changed meanwhile.

Options:
  --settle TIME          how long a file must stay unchanged before it is read (default ${DEFAULTS.settle.text};
                         e.g. 300ms, 3s). A file not ending with a line break gets ${DEFAULTS.incompleteGrace.text}. A writer
                         that pauses longer can be read half-written: write elsewhere, then mv
                         the file into DIR (one atomic rename)
${budgetUsage("watch")}
${WORK_USAGE}

Exit codes: 0 stopped cleanly (Ctrl-C, SIGTERM), 1 the state file could no longer be written,
2 bad options or folder (nothing started), 3 the output folder's disk is full or failing (start
again once space is freed), or stopped before spending more at --max-seconds / --max-credits
(what was in flight finished first; start again with a higher cap), 130 a second Ctrl-C (quit at
once).`;

export const watchCommand: Command = {
  name: "watch",
  usage: USAGE,
  options: { ...WORK_OPTIONS, ...BUDGET_OPTIONS, settle: { type: "string" } },
  run: runWatch,
};

/**
 * A folder missing at the start is almost always a typo, and a watcher waiting on it would wait for
 * good in silence. (One deleted while watching is waited for: see watchFolder.)
 */
async function checkWatchedFolder(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw new UsageError(`no folder at ${dir}; check the path, or create it first (mkdir -p)`);
  if (!info.isDirectory()) {
    throw new UsageError(`${dir} is a file; give the folder that holds the manifests`);
  }
}

async function runWatch(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length !== 1) throw new UsageError("give exactly one folder to watch");
  await checkWatchedFolder(resolve(io.cwd, args.positionals[0]!));
  const place = workplaceOf(args.positionals, args, io);
  const settings = readServiceSettings(args, io, true, place);
  io.stderr.write(`reel watch: ${workplaceLine(place, io.cwd, existsSync(place.statePath))}\n`);
  const allowRead = (args.values["allow-read"] as string[] | undefined) ?? [];
  await checkAllowRead(allowRead, io.cwd);
  const settleRaw = args.values.settle as string | undefined;
  const settleMs = settleRaw === undefined ? undefined : parseDuration(settleRaw);
  if (settleRaw !== undefined && settleMs === undefined) {
    throw new UsageError(`expected --settle to be a duration such as 500ms, 1s or 3s, got '${settleRaw}'`);
  }
  const maxVideos = maxVideosOf(args, io, place.project);
  // One watch session per folder, however it is reached.
  const scope = watchScope(realPathOf(resolve(io.cwd, args.positionals[0]!)));
  const budgetRequest = readBudgetRequest(args, io, place, scope);
  return withWorkSession("watch", settings, args, io, async (session) => {
    // A manifest a state above has run is skipped, as `run` refuses it (see passed-over-states.ts).
    const refuseJobs = refusalOf(settings, args, session.store);
    const budget = await openSessionBudget("watch", session, budgetRequest, io);
    const end = await watchFolder({
      ...session.engine,
      ...(budget ? { budget } : {}),
      dir: args.positionals[0]!,
      load: {
        cwd: io.cwd,
        allowRead: withProjectRoot(allowRead, place),
        hashFile: session.hasher,
        maxVideos,
      },
      progress: session.progress,
      // Above the live display on a terminal, which would otherwise draw over it.
      report: (text) => (session.progress.print ? session.progress.print(text) : io.stderr.write(text)),
      tty: io.stderr.isTTY === true,
      settleMs,
      refuseJobs: async (jobs) =>
        passedOverMessage(place, io.cwd, [...new Set(jobs.map((job) => job.manifest))]) ??
        (await refuseJobs(jobs)),
      service: settings.sandbox ? "sandbox" : settings.baseUrl!,
    });
    if (end.capped && budget) {
      // The session stays open: a watch started again with a higher cap goes on counting.
      const left = await budget.leftUnsent(end.rows, session.store);
      io.stderr.write(`reel watch: ${describeStop(budget, left)}\n`);
      session.events.end("capped", EXIT.budgetReached);
      return EXIT.budgetReached;
    }
    // A clean stop ends the watch's session: the next watch counts from nothing.
    await endBudgetScope(session.store, budget?.session.scope ?? scope);
    session.events.end("stopped", EXIT.ok);
    io.stderr.write(
      "reel watch: stopped. Tasks already submitted keep running; start again to follow them.\n",
    );
    return EXIT.ok;
  });
}
