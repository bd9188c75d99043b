// `reel plan PATH...`: what a run would do, with no call to the service: jobs by state, uploads new
// vs already made, speech to generate, seconds of video per model. Human text, or `--json`.

import { existsSync } from "node:fs";
import type { ReportCode } from "../errors/reel-error.js";
import { UsageError } from "../errors/usage.js";
import {
  type Explained,
  explainPlan,
  makeJobFilter,
  makePlan,
  type NormalizedManifest,
  onlyHint,
  type Plan,
} from "../manifest/index.js";
import { staleRetakeLines, withRetakes } from "../review/retake.js";
import type { RetakeRow } from "../state/job-store.js";
import { canonicalBaseUrl } from "../service-contract/base-url.js";
import { findPriceTable, type PlanSpend, planSpend } from "../prices/index.js";
import { loadPlanStateView } from "./plan-state-view.js";
import { comparedWith, formatExplained, formatPlan, formatSpend, sharedPlanLine } from "./plan-text.js";
import type { JobStore } from "../state/job-store.js";
import { findSharedBudget, type SharedBudget } from "../budget/named.js";
import { sharedJson } from "../budget/messages.js";
import { CAP_TOLERANCE } from "../budget/cost.js";
import { budgetNameOf } from "./budget-options.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { lastServiceOf, openStateToRead } from "./read-state.js";
import {
  checkBaseUrl,
  envSetting,
  givenBaseUrl,
  PRIVATE_SOURCES_OPTION,
  refuseSandboxWithBaseUrl,
  SANDBOX_SERVICE_ID,
  sandboxServiceId,
} from "./service-options.js";
import { isSandboxAddress } from "../state/service-address.js";
import {
  exitCodeWithSkipped,
  goesOnDespite,
  SKIP_INVALID_OPTION,
  skippedLine,
  skippedManifests,
} from "./skip-invalid.js";
import {
  checkWorkplace,
  withProjectRoot,
  type Workplace,
  workplaceJson,
  workplaceLine,
  workplaceOf,
} from "./workplace.js";
import { MAX_VIDEOS_OPTION, maxVideosOf, maxVideosUsage } from "./max-videos.js";
import {
  loadFromArgs,
  problemsText,
  stringList,
  summarize,
  summaryText,
  writeProblems,
} from "./validate-command.js";

const USAGE = `Usage: reel plan PATH... [--only GLOB]... [--state FILE] [--base-url URL | --sandbox]
                 [--allow-read DIR]... [--max-videos N] [--skip-invalid] [--explain]
                 [--prices FILE] [--budget NAME] [--json]

PATH: manifest files, or folders searched for *.yaml / *.yml. Nothing is sent to the service.

Options:
  --only GLOB        plan only jobs whose manifest/id matches (repeatable): 'spring/*', 'intro',
                     'spring/scene-?'; '*' and '?' stay within a name, '**' matches across
  --store URL        the shared store on PostgreSQL to compare with (env REEL_STORE; with
                     --base-url, the project's baseUrl, or --sandbox)
  --state FILE       state file to compare with (env REEL_STATE; default: the project's, as run)
  --base-url URL     compare with what was done on this service (env REEL_BASE_URL; default:
                     the project's baseUrl, else the service the state file used last)
  --sandbox          compare with what was done on the built-in sandbox
  --allow-read DIR   let manifests read files under DIR too (repeatable)
${maxVideosUsage(21)}
  --skip-invalid     plan the valid manifests when some are invalid, and list the others with
                     their problems (as run --skip-invalid would run the valid ones); exit 1
                     when one was skipped
  --explain          say why each job to submit would be: new, changed since its last version
                     (the fields that differ), failed before anything was sent, or sent again
                     on request (with --retry-failed, --resubmit-uncertain, as run takes them)
  --retry-failed, --resubmit-uncertain
                     count the failed, the uncertain jobs as to submit, as run does with them
  --budget NAME      say what the named budget NAME (default: reel.yaml's budget) has left, and
                     what this run would spend of it, by the budget's own price list
  --prices FILE      the price list that turns seconds of video into credits (env REEL_PRICES;
                     default: prices.yaml beside the project's reel.yaml, or the state, if there)
  --json             print the plan as JSON on stdout (with --explain: "explain", with prices:
                     "spend.credits")
  --out, --concurrency, --allow-private-sources
                     accepted and ignored, so that a script can give plan the options of run

Exit codes: 0, 1 --skip-invalid skipped a manifest, 2 invalid manifests or options, or a state
file that cannot be read.`;

export const planCommand: Command = {
  name: "plan",
  usage: USAGE,
  options: {
    only: { type: "string", multiple: true },
    state: { type: "string" },
    store: { type: "string" },
    "base-url": { type: "string" },
    sandbox: { type: "boolean" },
    "allow-read": { type: "string", multiple: true },
    ...MAX_VIDEOS_OPTION,
    json: { type: "boolean" },
    explain: { type: "boolean" },
    prices: { type: "string" },
    budget: { type: "string" },
    "retry-failed": { type: "boolean" },
    "resubmit-uncertain": { type: "boolean" },
    // Taken and ignored, so that scripts can give plan the options they give run.
    out: { type: "string" },
    concurrency: { type: "string" },
    ...PRIVATE_SOURCES_OPTION,
    ...SKIP_INVALID_OPTION,
  },
  async run(args: ParsedArgs, io: CliIO): Promise<number> {
    const place = workplaceOf(args.positionals, args, io);
    const statePath = place.statePath;
    const maxVideos = maxVideosOf(args, io, place.project);
    const loaded = await loadFromArgs(args, io, "plan", withProjectRoot([], place), maxVideos);
    const json = args.values.json === true;
    const skipInvalid = goesOnDespite(loaded, args.values["skip-invalid"]);
    if (loaded.problems.length > 0 && !skipInvalid) {
      if (json)
        io.stdout.write(
          `${JSON.stringify({ ok: false, error: { code: "E_INVALID" satisfies ReportCode, message: problemsText(loaded.problems) }, problems: loaded.problems, warnings: loaded.warnings })}\n`,
        );
      else writeProblems(loaded.problems, io, "plan", loaded.warnings);
      return EXIT.invalidInput;
    }
    const skipped = skipInvalid ? skippedManifests(loaded) : [];
    if (!json) {
      writeProblems(loaded.problems, io, "plan", loaded.warnings);
      if (skipped.length > 0) io.stderr.write(`${skippedLine("plan", skipped)}\n`);
    }
    checkWorkplace(place, loaded.manifests, io.cwd);
    const prices = findPriceTable({
      given: typeof args.values.prices === "string" ? args.values.prices : envSetting(io.env, "REEL_PRICES"),
      anchorDir: place.anchor.dir,
      cwd: io.cwd,
    });
    // What run would also resubmit: counted in --explain and in the spend alike.
    const flags = {
      retryFailed: args.values["retry-failed"] === true,
      resubmitUncertain: args.values["resubmit-uncertain"] === true,
    };
    const budgetName = budgetNameOf(args, place);
    const { store, service } = await openStateForPlan(args, io, place);
    let shared: SharedBudget | undefined;
    let plan: Plan;
    let explained: Explained[] | undefined;
    let manifests: NormalizedManifest[];
    try {
      // Retakes queued (reel retake) are jobs of their manifests, as run takes them.
      const retaken = store
        ? await withRetakes(store, loaded.manifests)
        : { manifests: loaded.manifests, retakes: new Map<string, RetakeRow>(), stale: [] };
      if (!json) for (const line of staleRetakeLines(retaken.stale)) io.stderr.write(`reel plan: ${line}\n`);
      const only = stringList(args.values, "only");
      const filter = makeJobFilter(only);
      manifests = retaken.manifests
        .map((m) => ({ ...m, jobs: m.jobs.filter((job) => filter(job.key)) }))
        .filter((m) => m.jobs.length > 0 || only.length === 0);
      if (only.length > 0 && manifests.length === 0) {
        throw new UsageError(`--only ${only.join(", ")} matches no job${onlyHint(only)}`);
      }

      if (budgetName !== undefined) {
        if (!store) throw new UsageError(`no budget named '${budgetName}': nothing has run here yet`);
        shared = await findSharedBudget(store, budgetName);
      }
      const view = store
        ? await loadPlanStateView(store, place.outDir, manifests, retaken.retakes)
        : undefined;
      plan = makePlan(manifests, view);
      if (args.values.explain === true) {
        explained = explainPlan(manifests, plan, view, { ...flags, cwd: io.cwd });
      }
      if (store && service !== undefined && !isSandboxAddress(service)) {
        const fresh = new Set(plan.jobs.new);
        const jobs = manifests.flatMap((m) => m.jobs).filter((job) => fresh.has(job.key));
        plan.sentElsewhere = await store.listSentElsewhere(jobs, [SANDBOX_SERVICE_ID]);
      }
    } finally {
      await store?.close();
    }

    const spend = planSpend(manifests, plan, prices, flags);
    // What the run would spend of the named budget, priced by the budget's own list.
    const budget = shared && sharedPlanJson(shared, planSpend(manifests, plan, shared.prices, flags));
    const summary = summarize({ manifests, problems: [] });
    const code = exitCodeWithSkipped(EXIT.ok, skipped);
    if (json) {
      const { warnings } = loaded;
      io.stdout.write(
        `${JSON.stringify({ ok: code === EXIT.ok, ...workplaceJson(place), service: service ?? null, summary, plan, spend, ...(budget ? { budget } : {}), ...(explained ? { explain: explained } : {}), warnings, skipped })}\n`,
      );
    } else {
      const verdict = `${summaryText(summary)}: ok${skipped.length > 0 ? ` (${skipped.length} invalid skipped)` : ""}`;
      io.stdout.write(
        `${workplaceLine(place, io.cwd, existsSync(statePath))}\n${formatPlan(plan, verdict, comparedWith(store, service), [...formatSpend(spend), ...(shared ? [sharedPlanLine(shared, budget!)] : [])])}${explained ? formatExplained(explained) : ""}`,
      );
    }
    return code;
  },
};

/** The plan's spend of a named budget: what it would take of it, and whether that fits. */
function sharedPlanJson(shared: SharedBudget, spend: PlanSpend): Record<string, unknown> {
  const row = shared.row;
  const wouldSpend = {
    seconds: spend.seconds.new + spend.seconds.retry,
    credits: spend.credits ? spend.credits.new + spend.credits.retry : 0,
  };
  const fits =
    (row.maxSeconds === null || row.spentSeconds + wouldSpend.seconds <= row.maxSeconds + CAP_TOLERANCE) &&
    (row.maxCredits === null || row.spentCredits + wouldSpend.credits <= row.maxCredits + CAP_TOLERANCE);
  return { ...sharedJson(row), wouldSpend, fits };
}

/**
 * The state of the service this plan is for, read-only: the one `run` would use (--base-url,
 * REEL_BASE_URL, the project file's `baseUrl:`), the sandbox's with --sandbox, or else the one the
 * state file used last. A base URL given is checked as `run` checks it, so a plan against a mistyped
 * address says so instead of showing every job as new.
 */
async function openStateForPlan(
  args: ParsedArgs,
  io: CliIO,
  place: Workplace,
): Promise<{ store: JobStore | undefined; service: string | undefined }> {
  const { statePath, storeUrl } = place;
  refuseSandboxWithBaseUrl(args);
  const given = givenBaseUrl(args, io, place);
  if (given !== undefined && args.values.sandbox !== true)
    checkBaseUrl(given, envSetting(io.env, "REEL_API_KEY"));
  const chosen =
    args.values.sandbox === true
      ? sandboxServiceId(storeUrl)
      : given === undefined
        ? undefined
        : canonicalBaseUrl(given);
  if (storeUrl !== undefined) {
    // A shared store serves many services' runners: which one to compare with is the user's to say.
    if (chosen === undefined) {
      throw new UsageError(
        "with --store, say which service to compare with: --base-url URL (or baseUrl: in reel.yaml) or --sandbox",
      );
    }
    return { store: await openStateToRead(statePath, chosen, storeUrl), service: chosen };
  }
  if (!existsSync(statePath)) return { store: undefined, service: chosen };
  const service = chosen ?? lastServiceOf(statePath);
  return { store: await openStateToRead(statePath, service), service };
}
