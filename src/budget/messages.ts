// What a capped run says: its budget when it starts, and why and where it stopped. One place for
// the words, so the run's summary, the watcher and --json say the same.

import type { Budget, BudgetThreshold } from "./budget.js";
import { type BudgetCaps, CAP_TOLERANCE, type Cost } from "./cost.js";
import { agree, plural } from "../plural.js";
import type { NamedBudget } from "../state/job-store.js";
import type { NamedBudgetNotice } from "../state/named-budget.js";

/** A number of credits as a person reads it: at most two decimals. */
export function credits(n: number): string {
  return `${Math.round(n * 100) / 100}`;
}

/** Seconds of video as the plan says them. */
function seconds(n: number): string {
  return `${Math.round(n * 10) / 10} s`;
}

function costText(cost: Cost, caps: BudgetCaps, priced: boolean): string {
  const parts: string[] = [];
  if (caps.maxSeconds !== undefined || !priced) parts.push(`${seconds(cost.seconds)} of video`);
  if (priced) parts.push(`${credits(cost.credits)} credits`);
  return parts.join(", ");
}

function capText(caps: BudgetCaps): string {
  return [
    caps.maxSeconds !== undefined ? `--max-seconds ${caps.maxSeconds}` : undefined,
    caps.maxCredits !== undefined ? `--max-credits ${caps.maxCredits}` : undefined,
  ]
    .filter((x) => x !== undefined)
    .join(" and ");
}

/** A named budget's caps, as `reel budget set` takes them. */
export function sharedCapText(row: NamedBudget): string {
  return capText({
    ...(row.maxSeconds !== null ? { maxSeconds: row.maxSeconds } : {}),
    ...(row.maxCredits !== null ? { maxCredits: row.maxCredits } : {}),
  });
}

/** What a named budget has spent and has left, in the units of its caps. */
export function sharedSpentText(row: NamedBudget): string {
  const parts: string[] = [];
  if (row.maxSeconds !== null)
    parts.push(
      `${seconds(row.spentSeconds)} of video spent, ${seconds(Math.max(0, row.maxSeconds - row.spentSeconds))} left`,
    );
  if (row.maxCredits !== null)
    parts.push(
      `${credits(row.spentCredits)} credits spent, ${credits(Math.max(0, row.maxCredits - row.spentCredits))} left`,
    );
  return parts.join("; ");
}

/** The line a run naming a budget starts with. */
function describeShared(row: NamedBudget): string {
  return `budget '${row.name}' (${sharedCapText(row)}${row.prices ? `, prices: ${row.prices.file}` : ""}), shared by every run that names it: ${sharedSpentText(row)}`;
}

/** The line a capped run starts with. */
export function describeBudget(budget: Budget): string {
  const shared = budget.shared && describeShared(budget.shared.row);
  if (budget.caps.maxSeconds === undefined && budget.caps.maxCredits === undefined) return shared!;
  return `${describeOwnCap(budget)}${shared ? `; ${shared}` : ""}`;
}

function describeOwnCap(budget: Budget): string {
  const priced = budget.prices !== undefined;
  const spent = budget.earlier;
  const resumed =
    spent.seconds > 0 || spent.credits > 0
      ? `; ${costText(spent, budget.caps, priced)} already spent by the earlier work it resumes (since ${new Date(budget.session.startedAt).toLocaleString()}), counted`
      : "";
  return `budget: ${capText(budget.caps)}${priced ? ` (prices: ${budget.prices!.file})` : ""}${resumed}`;
}

/**
 * Why a capped run stopped, what is left and how to go on. `left`: the jobs it did not submit, and
 * what they would cost (seconds, and credits where the list prices them).
 */
export function describeStop(budget: Budget, left: { jobs: number; cost: Cost }): string {
  const stop = budget.stopped!;
  if (stop.shared) return describeSharedStop(budget, stop.shared, left);
  const priced = budget.prices !== undefined;
  const { caps } = budget;
  const lines: string[] = [];
  if (stop.unpriced) {
    lines.push(
      `stopped before spending more: ${stop.what} is not priced by ${budget.prices?.file ?? "a price list"}, so --max-credits cannot count it; add its model (and resolution) to the list.`,
    );
  } else {
    const earlier = budget.earlier.seconds > 0 || budget.earlier.credits > 0;
    lines.push(
      `stopped before spending more: ${stop.what} (${costText(stop.cost, caps, priced)}) would pass ${capText(caps)}. Spent: ${costText(budget.spent, caps, priced)}${earlier ? `, ${costText(budget.earlier, caps, priced)} of it by the earlier work this one resumed` : ""}.`,
    );
  }
  if (left.jobs > 0) {
    lines.push(
      `Not submitted: ${plural(left.jobs, "job")}, ${costText(left.cost, caps, priced)}${budget.prices?.speech !== undefined ? ` with the speech ${agree(left.jobs, "it needs", "they need")}` : ""}; nothing was paid for ${agree(left.jobs, "it", "them")}. Tasks already submitted were followed and their videos downloaded.`,
    );
  }
  // The cap for the whole count the rerun resumes: what it spent (the runs before included) and what
  // is left, speech included, rounded up (a sum of decimal prices a hair above a whole number is
  // that number, as the budget counts it). Said last: the cap a reader takes from the output.
  const spent = budget.spent;
  const needed = { seconds: spent.seconds + left.cost.seconds, credits: spent.credits + left.cost.credits };
  const roundUp = (n: number): number => Math.ceil(n - CAP_TOLERANCE);
  const raise = [
    caps.maxSeconds !== undefined ? `--max-seconds ${roundUp(needed.seconds)}` : undefined,
    caps.maxCredits !== undefined ? `--max-credits ${roundUp(needed.credits)}` : undefined,
  ]
    .filter((x) => x !== undefined)
    .join(" ");
  lines.push(
    `To go on, rerun the same command with a higher cap: the rerun resumes this count, so what was spent counts against it; ${raise} covers what was spent and what is left.`,
  );
  return lines.join("\n");
}

/** The budget in a command's --json document: caps, spend, and where it stopped. */
export function budgetJson(budget: Budget, left?: { jobs: number; cost: Cost }): Record<string, unknown> {
  const stop = budget.stopped;
  return {
    caps: { maxSeconds: budget.caps.maxSeconds ?? null, maxCredits: budget.caps.maxCredits ?? null },
    prices: budget.prices?.file ?? null,
    session: { id: budget.session.id, startedAt: new Date(budget.session.startedAt).toISOString() },
    earlier: budget.earlier,
    spent: budget.spent,
    stopped: stop ? { what: stop.what, cost: stop.cost, unpriced: stop.unpriced } : null,
    shared: budget.shared ? sharedJson(stop?.shared ?? budget.shared.row) : null,
    ...(left ? { left } : {}),
  };
}

/** Why a run naming a budget stopped at it, what is left, and the cap that covers it. */
function describeSharedStop(budget: Budget, row: NamedBudget, left: { jobs: number; cost: Cost }): string {
  const stop = budget.stopped!;
  const priced = row.prices !== null;
  const caps = {
    ...(row.maxSeconds !== null ? { maxSeconds: row.maxSeconds } : {}),
    ...(row.maxCredits !== null ? { maxCredits: row.maxCredits } : {}),
  };
  const lines: string[] = [];
  if (stop.unpriced) {
    lines.push(
      `stopped before spending more: ${stop.what} is not priced by ${row.prices?.file ?? "a price list"}, the list the budget '${row.name}' counts credits by; set it again with one that does: reel budget set ${row.name} --prices FILE.`,
    );
  } else {
    lines.push(
      `stopped before spending more: ${stop.what} (${costText(stop.cost, caps, priced)}) would pass the budget '${row.name}' (${sharedCapText(row)}), shared by every run that names it. Spent from it: ${costText({ seconds: row.spentSeconds, credits: row.spentCredits }, caps, priced)}, by this run: ${costText(budget.spent, caps, priced)}.`,
    );
  }
  if (left.jobs > 0) {
    lines.push(
      `Not submitted: ${plural(left.jobs, "job")}, ${costText(left.cost, caps, priced)}; nothing was paid for ${agree(left.jobs, "it", "them")}. Tasks already submitted were followed and their videos downloaded.`,
    );
  }
  const roundUp = (n: number): number => Math.ceil(n - CAP_TOLERANCE);
  const raise = [
    row.maxSeconds !== null ? `--max-seconds ${roundUp(row.spentSeconds + left.cost.seconds)}` : undefined,
    row.maxCredits !== null ? `--max-credits ${roundUp(row.spentCredits + left.cost.credits)}` : undefined,
  ]
    .filter((x) => x !== undefined)
    .join(" ");
  lines.push(
    `To go on, raise the budget and rerun: reel budget set ${row.name} ${raise} covers what was spent from it and what this run left (other runs naming it may spend from it too).`,
  );
  return lines.join("\n");
}

/** A named budget in --json: its caps, and what was spent and is left (when read). */
export function sharedJson(row: NamedBudget): Record<string, unknown> {
  return {
    name: row.name,
    caps: { maxSeconds: row.maxSeconds, maxCredits: row.maxCredits },
    prices: row.prices?.file ?? null,
    spent: { seconds: row.spentSeconds, credits: row.spentCredits },
    left: {
      seconds: row.maxSeconds === null ? null : Math.max(0, row.maxSeconds - row.spentSeconds),
      credits: row.maxCredits === null ? null : Math.max(0, row.maxCredits - row.spentCredits),
    },
  };
}

/** A share of a cap passed: "80% of --max-seconds 50: 40 s of video spent or on its way". */
export function describeThreshold(passed: BudgetThreshold): string {
  const flag = passed.cap === "seconds" ? "--max-seconds" : "--max-credits";
  const amount =
    passed.cap === "seconds" ? `${seconds(passed.spent)} of video` : `${credits(passed.spent)} credits`;
  return `${passed.percent}% of ${flag} ${passed.max}: ${amount} spent or on its way`;
}

/**
 * A share of a named budget told: "80% of the budget 'team' (--max-seconds 50): 40 s of video spent
 * by the runs that name it", or, at a refusal, that it has no room for the next job.
 */
export function describeNamedNotice(notice: NamedBudgetNotice): string {
  const flag = notice.cap === "seconds" ? "--max-seconds" : "--max-credits";
  const amount = (n: number): string =>
    notice.cap === "seconds" ? `${seconds(n)} of video` : `${credits(n)} credits`;
  const budget = `the budget '${notice.budget}' (${flag} ${notice.max})`;
  const spent = `${amount(notice.spent)} spent by the runs that name it`;
  const { refused } = notice;
  return refused
    ? `${budget} has no room for the next ${refused.for} (${amount(refused.amount)}): ${spent}`
    : `${notice.percent}% of ${budget}: ${spent}`;
}
