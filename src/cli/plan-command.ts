// `reel plan PATH...`: what a run would do, with no call to the service: jobs by state, uploads new
// vs already made, speech to generate, seconds of video per model. Human text, or `--json`.

import { existsSync } from "node:fs";
import { type ReportCode, UsageError } from "../errors.js";
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
import type { JobStore } from "../state/job-store.js";
import { findSharedBudget, type SharedBudget } from "../budget/named.js";
import { sharedCapText, sharedJson, sharedSpentText } from "../budget/messages.js";
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
import { plural } from "../plural.js";
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

const LIST_LIMIT = 20;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function keyList(label: string, keys: readonly string[]): string[] {
  if (keys.length === 0) return [];
  const shown = keys.slice(0, LIST_LIMIT).map((k) => `  ${k}`);
  if (keys.length > LIST_LIMIT) shown.push(`  ... and ${keys.length - LIST_LIMIT} more (--json lists all)`);
  return [`${label}:`, ...shown];
}

export function formatPlan(
  plan: Plan,
  summaryLine: string,
  comparedWith: string,
  spend: readonly string[] = [],
): string {
  const j = plan.jobs;
  const uploadBytes = plan.uploads.new.reduce((sum, u) => sum + u.size, 0);
  const replaced = new Map(plan.replaces.map((r) => [r.key, r.keptAs]));
  const lines = [
    summaryLine,
    comparedWith,
    "",
    `jobs       ${j.new.length} new, ${j.done.length} done, ${j.inFlight.length} in flight, ${j.failed.length} failed, ${j.uncertain.length} uncertain`,
    ...(plan.repeats.length > 0
      ? [
          `           ${plan.repeats.length} of the new jobs repeat a video already made under another name (see below)`,
        ]
      : []),
    ...(plan.sentElsewhere.length > 0
      ? [
          `           ${plan.sentElsewhere.length} of the new jobs were already sent to another service address: run refuses them without --new-service (see below)`,
        ]
      : []),
    `uploads    ${plan.uploads.new.length} to upload (${formatBytes(uploadBytes)}), ${plan.uploads.cached.length} already uploaded`,
    ...(plan.downloads.length > 0
      ? [`downloads  ${plural(plan.downloads.length, "https file")} to fetch, then upload`]
      : []),
    `speech     ${plan.speech.new.length} to generate, ${plan.speech.cached.length} already made`,
    "",
    "seconds of video per model",
    `  ${"model".padEnd(15)}${"videos".padStart(8)}${"seconds".padStart(10)}${"new".padStart(8)}`,
  ];
  for (const m of plan.models) {
    lines.push(
      `  ${m.model.padEnd(15)}${String(m.videos).padStart(8)}${String(m.seconds).padStart(10)}${String(m.newSeconds).padStart(8)}`,
    );
  }
  const newSeconds = plan.models.reduce((sum, m) => sum + m.newSeconds, 0);
  lines.push(
    `  ${"total".padEnd(15)}${String(plan.videos).padStart(8)}${String(plan.seconds).padStart(10)}${String(newSeconds).padStart(8)}`,
  );
  lines.push(...spend);
  const lists = [
    ...keyList(
      "to submit",
      j.new.map((key) => {
        const kept = replaced.get(key);
        return kept === undefined
          ? key
          : `${key} (replaces an earlier version: its video is kept as ${kept})`;
      }),
    ),
    ...keyList("in flight", j.inFlight),
    ...keyList(
      "failed (run --retry-failed to resubmit, up to --max-attempts attempts a job, 3 by default)",
      j.failed,
    ),
    ...keyList("uncertain (run --resubmit-uncertain to resubmit)", j.uncertain),
    ...keyList(
      "new, yet the same request as a video already made (a renamed manifest or id?): a run pays for these again; to keep the old ones, give the manifest its old name (name: ...) or the video its old id",
      plan.repeats.map((r) => `${r.key} (made as ${r.sameAs})`),
    ),
    ...keyList(
      "new here, yet already sent to another address (the same service under another name? use that address; another service? run --new-service pays for them again)",
      plan.sentElsewhere.map((r) => `${r.key} (sent to ${r.baseUrl})`),
    ),
  ];
  if (lists.length > 0) lines.push("", ...lists);
  return `${lines.join("\n")}\n`;
}

/** The spend table fits this many columns (an 80-column terminal, one spare). */
const TABLE_COLUMNS = 79;

/**
 * Seconds (and credits, with prices) per manifest and in total: new, paid again on request, paid.
 * Its columns as wide as their figures; a manifest name too long for the table has a line of its own,
 * its figures on the next.
 */
function formatSpend(spend: PlanSpend): string[] {
  const n = (value: number): string => String(Math.round(value * 100) / 100);
  const credits = spend.credits;
  const figures = (jobs: number, s: PlanSpend["seconds"], c: PlanSpend["seconds"] | undefined): string[] => [
    String(jobs),
    n(s.new),
    n(s.retry),
    n(s.paid),
    ...(c ? [n(c.new), n(c.retry), n(c.paid)] : []),
  ];
  const rows: { name: string; figures: string[] }[] = [
    ...spend.manifests.map((m) => ({ name: m.name, figures: figures(m.jobs, m.seconds, m.credits) })),
    {
      name: "total",
      figures: figures(
        spend.manifests.reduce((sum, m) => sum + m.jobs, 0),
        spend.seconds,
        credits,
      ),
    },
  ];
  const headers = ["jobs", "new", "retry", "paid", ...(credits ? ["new", "retry", "paid"] : [])];
  // Each figure's column: its widest entry (at least 5), two spaces before it.
  const widths = headers.map((h, i) => 2 + Math.max(5, h.length, ...rows.map((r) => r.figures[i]!.length)));
  const figuresWidth = widths.reduce((sum, w) => sum + w, 0);
  const longest = Math.max("manifest".length, ...rows.map((r) => r.name.length));
  const nameWidth = Math.max("manifest".length, Math.min(longest, TABLE_COLUMNS - 2 - figuresWidth));
  const line = (name: string, cells: readonly string[]): string =>
    `  ${name.padEnd(nameWidth)}${cells.map((cell, i) => cell.padStart(widths[i]!)).join("")}`;
  // The groups' names over their three columns.
  const group = (title: string, from: number): string =>
    title.padStart(widths.slice(from, from + 3).reduce((sum, w) => sum + w, 0));
  const lines = [
    "",
    credits
      ? `spend per manifest (seconds of video; credits by ${credits.prices})`
      : "spend per manifest (seconds of video; no price list: see --prices)",
    `  ${" ".repeat(nameWidth + widths[0]!)}${group("seconds of video", 1)}${credits ? group("credits", 4) : ""}`,
    line("manifest", headers),
  ];
  for (const row of rows) {
    if (row.name.length > nameWidth) lines.push(`  ${row.name}`, line("", row.figures));
    else lines.push(line(row.name, row.figures));
  }
  if (credits && credits.speech > 0) lines.push(`  (new credits include ${n(credits.speech)} for speech)`);
  if (spend.unpriced.length > 0)
    lines.push(
      `  not priced, so not counted: ${spend.unpriced.join(", ")} (add them to ${credits?.prices ?? "the price list"})`,
    );
  return lines;
}

/** --explain, as text: each job to submit and why, its changes one per line. */
function formatExplained(explained: readonly Explained[]): string {
  const lines = ["", `why (${explained.length} to submit):`];
  if (explained.length === 0) lines.push("  nothing to submit");
  for (const { key, reasons } of explained) {
    for (const reason of reasons) {
      if (reason.changes && reason.changes.length > 0) {
        lines.push(`  ${key}: changed since its last version:`);
        for (const change of reason.changes) lines.push(`      ${change}`);
      } else lines.push(`  ${key}: ${reason.text}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

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
    (row.maxSeconds === null || row.spentSeconds + wouldSpend.seconds <= row.maxSeconds + 1e-9) &&
    (row.maxCredits === null || row.spentCredits + wouldSpend.credits <= row.maxCredits + 1e-9);
  return { ...sharedJson(row), wouldSpend, fits };
}

function sharedPlanLine(shared: SharedBudget, json: Record<string, unknown>): string {
  const { wouldSpend, fits } = json as { wouldSpend: { seconds: number; credits: number }; fits: boolean };
  const row = shared.row;
  const would = [
    row.maxSeconds !== null ? `${wouldSpend.seconds} s of video` : undefined,
    row.maxCredits !== null ? `${Math.round(wouldSpend.credits * 100) / 100} credits` : undefined,
  ]
    .filter((x) => x !== undefined)
    .join(", ");
  return `budget '${row.name}' (${sharedCapText(row)}): ${sharedSpentText(row)}; this run would spend ${would} from it${fits ? "" : ", more than is left: it would stop at the budget"}`;
}

/** What the plan was compared with: a mistyped --state or another service explains "all new". */
function comparedWith(store: JobStore | undefined, service: string | undefined): string {
  // The state file itself is named on the plan's first line.
  if (!store) return "compared with: nothing (no state file yet): every job is new";
  const name =
    service !== undefined && isSandboxAddress(service)
      ? "the sandbox (--sandbox)"
      : (service ?? "no service yet");
  return `compared with: what the state file records of ${name}`;
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
