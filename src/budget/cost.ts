// What the budget counts in: a cost (seconds of video, credits), the caps a run sets on it, and what
// a session's ledger cost, priced as each charge was recorded.
import { type PriceTable, videoCredits } from "../prices/index.js";
import type { Model, Resolution } from "../service-contract/api-types.js";
import type { SpendTally } from "../state/job-store.js";
import { BUDGET_TOLERANCE } from "../state/ledger-rule.js";

export interface BudgetCaps {
  /** Seconds of video sent at most. */
  readonly maxSeconds?: number;
  /** Credits at most (needs a price list). */
  readonly maxCredits?: number;
}

/** What something costs, or was spent: seconds of video, and credits (0 without a price list). */
export interface Cost {
  readonly seconds: number;
  readonly credits: number;
}

/**
 * Sums of decimal prices (0.1 + 0.2) must not refuse an exact fit, nor round an advice up past it:
 * the stores' tolerance, so a run's cap and a named budget's agree on what fits.
 */
export const CAP_TOLERANCE = BUDGET_TOLERANCE;

/**
 * What a session's ledger cost: each charge at the credits recorded when it was sent; those sent with
 * no price known (no price list then, or an earlier reel's), at today's prices. Throws a message when
 * a cap in credits meets such spend the list does not price (a model removed from it since).
 */
export function costOfTally(tally: SpendTally, prices: PriceTable | undefined, caps: BudgetCaps): Cost {
  let seconds = 0;
  let credits = 0;
  for (const row of tally.videos) {
    seconds += row.seconds;
    if (row.credits !== null) {
      credits += row.credits;
      continue;
    }
    if (!prices) continue;
    const cost = videoCredits(
      prices,
      row.model as Model,
      (row.resolution ?? undefined) as Resolution | undefined,
      row.seconds,
    );
    if (cost === undefined && caps.maxCredits !== undefined) {
      throw new Error(
        `the runs this one resumes sent ${row.model}${row.resolution ? ` at ${row.resolution}` : ""}, which ${prices.file} does not price: add it, so that what they spent is counted`,
      );
    }
    credits += cost ?? 0;
  }
  for (const row of tally.speech) credits += row.credits ?? row.count * (prices?.speech ?? 0);
  return { seconds, credits };
}
