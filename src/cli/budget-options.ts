// --max-seconds, --max-credits and --prices on `run` and `watch`: the request for a capped run's
// budget (src/budget), checked before anything is sent.
import {
  type Budget,
  type BudgetCaps,
  type BudgetRequest,
  describeBudget,
  openBudget,
} from "../budget/index.js";
import { UsageError } from "../errors/usage.js";
import type { Job } from "../manifest/index.js";
import { findPriceTable, videoCredits } from "../prices/index.js";
import type { CliIO, OptionsConfig, ParsedArgs } from "./command.js";
import { BUDGET_NAME_PATTERN } from "../project/project-schema.js";
import type { WorkSession } from "./work-session.js";
import { envSetting, flagValue, type Workplace } from "./workplace.js";

export const BUDGET_OPTIONS: OptionsConfig = {
  "max-seconds": { type: "string" },
  "max-credits": { type: "string" },
  prices: { type: "string" },
  budget: { type: "string" },
};

/** The flags' help, for `run` or `watch` (whose count is per watch). */
export function budgetUsage(kind: "run" | "watch"): string {
  const counted =
    kind === "run"
      ? `in this run (a rerun of the same
                         manifests resumes the count until a run finishes)`
      : `in this watch (started again after a
                         crash or at the cap, it goes on counting; a clean stop ends the count)`;
  return `  --max-seconds N        submit at most N seconds of video ${counted}; past
                         it nothing more is sent, what is in flight finishes, exit 3; rerun with
                         a higher cap to go on. In a fleet (--store postgres://...) the cap is
                         per runner: it counts what this runner submits (and the speech it
                         makes), not the jobs of the other runners; N runners with the same cap
                         may spend up to N times it together
  --max-credits N        the same in credits, priced by the price list (see --prices); speech
                         counts too when the list prices it; per runner in a fleet too
  --budget NAME          spend from the named budget NAME too (reel budget set NAME ...; default:
                         reel.yaml's budget): one cap for every run and watch naming it, on any
                         machine sharing the store; at it, the same stop and exit 3 as at a cap
  --prices FILE          the price list (env REEL_PRICES; default: prices.yaml beside the
                         project's reel.yaml, or the state, if there)`;
}

/** A cap's value: a number above 0 (decimals allowed: credits often have them). */
export function capValue(name: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  const value = Number(text);
  if (text === "" || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(`expected ${name} to be a number above 0, got '${String(raw)}'`);
  }
  return value;
}

/**
 * The budget the flags ask for, or undefined when no cap is given. `scope`: what its session is of
 * (src/budget/session.ts).
 */
export function readBudgetRequest(
  args: ParsedArgs,
  io: CliIO,
  place: Workplace,
  scope: string,
): BudgetRequest | undefined {
  const caps: BudgetCaps = {
    ...optional("maxSeconds", capValue("--max-seconds", args.values["max-seconds"])),
    ...optional("maxCredits", capValue("--max-credits", args.values["max-credits"])),
  };
  const budgetName = budgetNameOf(args, place);
  // An uncapped run reads no price list: a mistake in one must not stop it.
  if (caps.maxSeconds === undefined && caps.maxCredits === undefined)
    return budgetName === undefined ? undefined : { caps, prices: undefined, scope, budgetName };
  const prices = findPriceTable({
    given: typeof args.values.prices === "string" ? args.values.prices : envSetting(io.env, "REEL_PRICES"),
    anchorDir: place.anchor.dir,
    cwd: io.cwd,
  });
  if (caps.maxCredits !== undefined && !prices) {
    throw new UsageError(
      "--max-credits needs a price list: the service publishes none. Write prices.yaml beside reel.yaml (README: Prices), or give --prices FILE; or cap seconds of video with --max-seconds",
    );
  }
  return { caps, prices, scope, ...(budgetName !== undefined ? { budgetName } : {}) };
}

/** The named budget the run spends from: --budget NAME, else the project's `budget`. */
export function budgetNameOf(args: ParsedArgs, place: Workplace): string | undefined {
  const name = flagValue(args.values, "budget") ?? place.project?.budget;
  if (name !== undefined) checkBudgetName(name);
  return name;
}

/** A budget's name: what a person types and reads back (letters, digits, . _ -). */
export function checkBudgetName(name: string): void {
  if (!BUDGET_NAME_PATTERN.test(name)) {
    throw new UsageError(`a budget's name is letters, digits, '.', '_' and '-' (at most 64), not '${name}'`);
  }
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/**
 * Under --max-credits, every job a run may send must be priced: one the list does not price would
 * stop the run at its turn. Said before anything is sent, with every model and resolution missing.
 */
export function checkPriced(request: BudgetRequest | undefined, jobs: readonly Job[]): void {
  if (!request?.prices || request.caps.maxCredits === undefined) return;
  const missing = new Set<string>();
  for (const job of jobs) {
    if (videoCredits(request.prices, job.model, job.spec.resolution, job.seconds) === undefined) {
      missing.add(
        `${job.model}${job.spec.resolution ? ` at ${job.spec.resolution}` : " (no resolution given)"}`,
      );
    }
  }
  if (missing.size === 0) return;
  throw new UsageError(
    `--max-credits cannot count what ${request.prices.file} does not price: ${[...missing].sort().join(", ")}. Add a price for each (README: Prices); nothing was sent`,
  );
}

/**
 * The budget of a run or watch, when `request` sets one, opened on the session's store and said:
 * its stops and thresholds go to the event stream, a named budget's count to --metrics. `jobs`: the
 * run's, checked as priced against a named budget's list before anything is sent.
 */
export async function openSessionBudget(
  command: "run" | "watch",
  session: WorkSession,
  request: BudgetRequest | undefined,
  io: CliIO,
  jobs?: readonly Job[],
): Promise<Budget | undefined> {
  if (!request) return undefined;
  const budget = await openBudget(session.store, request, {
    onWait: (line) => io.stderr.write(`reel ${command}: budget: ${line}\n`),
    signal: io.signal,
    ...(jobs ? { jobs } : {}),
  });
  io.stderr.write(`reel ${command}: ${describeBudget(budget)}\n`);
  budget.onStop((stop) => session.events.recorder.budgetReached(stop));
  budget.onThreshold((passed) => session.events.recorder.budgetThreshold(passed));
  const named = budget.shared?.row.name;
  if (named !== undefined) session.metrics?.followBudget(() => session.store.findBudget(named));
  return budget;
}
