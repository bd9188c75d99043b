// A named budget (`reel budget set NAME`): one cap for every run and watch that names it (`--budget
// NAME`, or `budget:` in reel.yaml), on any machine sharing the store. The store keeps its caps, what
// was spent from it and the price list it was set with; each claim (and each priced speech call)
// spends from it in the claim's own transaction (state/sqlite/sql/named-budgets.ts), so no interleaving of
// runners passes it and a kill -9 loses nothing. A run only prices its charges by the budget's list
// and stops, as at its own cap, the first time the store finds no room.
import { UsageError } from "../errors/usage.js";
import { type PriceTable, videoCredits } from "../prices/index.js";
import type { ModelPrice } from "../prices/price-table.js";
import type { Model, Resolution } from "../service-contract/api-types.js";
import type { Job } from "../manifest/index.js";
import type { NamedBudget, NamedBudgetRecords, NamedCharge } from "../state/job-store.js";

/** A named budget as a run uses it: its row when the run started, and its price list. */
export interface SharedBudget {
  readonly row: NamedBudget;
  readonly prices: PriceTable | undefined;
}

/** A price list as the store keeps it with a budget (JSON: maps as objects). */
export function priceTableJson(table: PriceTable): string {
  const video: Record<string, number | Record<string, number>> = {};
  for (const [model, price] of table.video) {
    video[model] = typeof price === "number" ? price : Object.fromEntries(price);
  }
  return JSON.stringify({ video, ...(table.speech !== undefined ? { speech: table.speech } : {}) });
}

/** The price list kept with a budget. */
export function priceTableOf(kept: { readonly file: string; readonly json: string }): PriceTable {
  const { video, speech } = JSON.parse(kept.json) as {
    video: Record<string, number | Record<string, number>>;
    speech?: number;
  };
  const prices = new Map<Model, ModelPrice>();
  for (const [model, price] of Object.entries(video)) {
    prices.set(
      model as Model,
      typeof price === "number" ? price : new Map(Object.entries(price) as [Resolution, number][]),
    );
  }
  return { file: kept.file, video: prices, speech };
}

/** Budget `name` of the store, or a UsageError that says how to make it (nothing sent). */
export async function findSharedBudget(
  store: Pick<NamedBudgetRecords, "findBudget">,
  name: string,
): Promise<SharedBudget> {
  const row = await store.findBudget(name);
  if (!row) {
    throw new UsageError(
      `no budget named '${name}' in the store: set it first, with reel budget set ${name} --max-seconds N (or --max-credits N --prices FILE); nothing was sent`,
    );
  }
  return { row, prices: row.prices ? priceTableOf(row.prices) : undefined };
}

/** What a job's video spends of the budget: its seconds, and its credits by the budget's list. */
export function sharedVideoCharge(shared: SharedBudget, job: Job): NamedCharge {
  const credits = shared.prices
    ? (videoCredits(shared.prices, job.model, job.spec.resolution, job.seconds) ?? 0)
    : 0;
  return { budget: shared.row.id, seconds: job.seconds, credits };
}

/** What a speech call spends of the budget: its price by the budget's list, if it prices speech. */
export function sharedSpeechCharge(shared: SharedBudget): NamedCharge | undefined {
  const price = shared.prices?.speech;
  return price === undefined ? undefined : { budget: shared.row.id, seconds: 0, credits: price };
}

/**
 * A budget in credits counts every job by its own list: a job it does not price would be counted at
 * nothing. Refused before anything is sent, naming what is missing.
 */
export function checkSharedPriced(shared: SharedBudget | undefined, jobs: readonly Job[]): void {
  if (!shared || shared.row.maxCredits === null) return;
  const missing = new Set<string>();
  for (const job of jobs) {
    if (
      !shared.prices ||
      videoCredits(shared.prices, job.model, job.spec.resolution, job.seconds) === undefined
    )
      missing.add(
        `${job.model}${job.spec.resolution ? ` at ${job.spec.resolution}` : " (no resolution given)"}`,
      );
  }
  if (missing.size === 0) return;
  throw new UsageError(
    `the budget '${shared.row.name}' counts credits by the price list it was set with (${shared.prices?.file ?? "none"}), which does not price ${[...missing].sort().join(", ")}; set it again with a list that does (reel budget set ${shared.row.name} --prices FILE); nothing was sent`,
  );
}
