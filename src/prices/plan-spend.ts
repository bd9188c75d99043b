// What a plan spends, per manifest and in total: seconds of video and, with a price list,
// credits, split into what a run would pay for new (new jobs, and the speech they need), what it
// would pay again on request (failed jobs with --retry-failed, uncertain ones with
// --resubmit-uncertain), and what was already paid (done, and in flight). Failed and uncertain jobs
// not asked for are neither: nothing is sent for them.
import type { Job, NormalizedManifest, Plan } from "../manifest/index.js";
import { type PriceTable, videoCredits } from "./price-table.js";

export interface SpendSplit {
  readonly new: number;
  readonly retry: number;
  readonly paid: number;
}

export interface ManifestSpend {
  readonly name: string;
  readonly jobs: number;
  readonly seconds: SpendSplit;
  /** With a price list; undefined without one. */
  readonly credits?: SpendSplit;
}

export interface PlanSpend {
  readonly manifests: readonly ManifestSpend[];
  readonly seconds: SpendSplit;
  readonly credits?: SpendSplit & {
    /** Of `new`: the speech the new jobs need. */
    readonly speech: number;
    /** The price list's file. */
    readonly prices: string;
  };
  /** Jobs whose video the list prices not (model, or model at its resolution), by model. */
  readonly unpriced: readonly string[];
}

export interface SpendOptions {
  readonly retryFailed: boolean;
  readonly resubmitUncertain: boolean;
}

type Kind = keyof SpendSplit;

export function planSpend(
  manifests: readonly NormalizedManifest[],
  plan: Plan,
  prices: PriceTable | undefined,
  options: SpendOptions,
): PlanSpend {
  const kindOf = new Map<string, Kind>();
  for (const key of plan.jobs.new) kindOf.set(key, "new");
  for (const key of [...plan.jobs.done, ...plan.jobs.inFlight]) kindOf.set(key, "paid");
  if (options.retryFailed) for (const key of plan.jobs.failed) kindOf.set(key, "retry");
  if (options.resubmitUncertain) for (const key of plan.jobs.uncertain) kindOf.set(key, "retry");

  const unpriced = new Set<string>();
  const total = { seconds: split(), credits: split() };
  const rows = manifests.map((manifest): ManifestSpend => {
    const seconds = split();
    const credits = split();
    for (const job of manifest.jobs) {
      const kind = kindOf.get(job.key);
      if (kind === undefined) continue;
      seconds[kind] += job.seconds;
      if (!prices) continue;
      const cost = credit(prices, job);
      if (cost === undefined)
        unpriced.add(`${job.model}${job.spec.resolution ? ` at ${job.spec.resolution}` : ""}`);
      else credits[kind] += cost;
    }
    for (const kind of KINDS) {
      total.seconds[kind] += seconds[kind];
      total.credits[kind] += credits[kind];
    }
    return {
      name: manifest.name,
      jobs: manifest.jobs.length,
      seconds,
      ...(prices ? { credits } : {}),
    };
  });
  const speech = prices?.speech === undefined ? 0 : prices.speech * plan.speech.new.length;
  total.credits.new += speech;
  return {
    manifests: rows,
    seconds: total.seconds,
    ...(prices ? { credits: { ...total.credits, speech, prices: prices.file } } : {}),
    unpriced: [...unpriced].sort(),
  };
}

const KINDS: readonly Kind[] = ["new", "retry", "paid"];

function split(): { new: number; retry: number; paid: number } {
  return { new: 0, retry: 0, paid: 0 };
}

function credit(prices: PriceTable, job: Job): number | undefined {
  return videoCredits(prices, job.model, job.spec.resolution, job.seconds);
}
