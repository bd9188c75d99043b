// What a capped run says: its budget when it starts, and why and where it stopped. One place for
// the words, so the run's summary, the watcher and --json say the same.

import { type Budget, type BudgetCaps, CAP_TOLERANCE, type Cost } from "./budget.js";
import { agree, plural } from "../plural.js";

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

/** The line a capped run starts with. */
export function describeBudget(budget: Budget): string {
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
    ...(left ? { left } : {}),
  };
}
