// `reel retake JOB... [--note TEXT]`: one more take of each video named, with a new seed, the take
// retaken marked rejected (src/review/retake.ts). It is paid: the command says what it will cost
// before anything is queued (and asks, on a terminal); the next run of its manifest, or a running
// watch, sends it once. `reel retake --withdraw JOB...` takes back a queued retake until it is sent.
import { createInterface } from "node:readline/promises";
import { UsageError } from "../errors/usage.js";
import { agree, plural } from "../plural.js";
import type { Model, Resolution } from "../service-contract/api-types.js";
import { findPriceTable, type PriceTable, videoCredits } from "../prices/index.js";
import { planRetake } from "../review/retake.js";
import type { JobRow, RetakeRow } from "../state/job-store.js";
import { readStoredSpec } from "../stored-spec.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { REVIEW_OPTIONS, REVIEW_USAGE } from "./decide-command.js";
import { EXIT } from "./exit-codes.js";
import { openStateToReview } from "./read-state.js";
import { findReviewTarget, serviceFlag } from "./review-target.js";
import { noteGiven, reviewerGiven, reviewerOf } from "./reviewer.js";
import { envSetting } from "./service-options.js";
import { workplaceLine } from "./workplace.js";

/** The states a take can be retaken from: it has ended (a failed one too). */
const ENDED: ReadonlySet<JobRow["state"]> = new Set(["Success", "Fail", "Canceled", "uncertain"]);

const USAGE = `Usage: reel retake JOB... [--note TEXT] [--reviewer NAME] [--yes] [options]
       reel retake --withdraw JOB... [options]

Queues one more take of each video named, with a new seed (the take after the highest so far:
intro~4 after intro~1..3; a video without takes is its own first take, so intro~2), and marks the
take retaken rejected, with the note. Each is a paid generation: the command says what they cost
first (and asks, on a terminal); the next run of the manifest, or a running watch, sends each once,
within the budget cap. Retaking again makes another take; a failed take can be retaken too.

${REVIEW_USAGE.replace(
  "\n  --sandbox",
  `
  --note TEXT        why, kept with the rejection
  --withdraw         take back the retakes named (their new take: shop/mug~3) until they are sent
  --yes              queue without asking (nothing is asked when stdin is not a terminal)
  --prices FILE      the price list, to say the cost in credits (env REEL_PRICES; default:
                     prices.yaml beside the project's reel.yaml, or the state, if there)
  --sandbox`,
)}

Exit codes: 0 queued (or withdrawn), 1 not confirmed: nothing queued, 2 a job that does not exist,
a take not ended yet, a retake already sent (--withdraw), no reviewer, or bad options: nothing
queued.`;

export const retakeCommand: Command = {
  name: "retake",
  usage: USAGE,
  options: {
    ...REVIEW_OPTIONS,
    note: { type: "string" },
    withdraw: { type: "boolean" },
    yes: { type: "boolean" },
    prices: { type: "string" },
  },
  run: (args, io) => (args.values.withdraw === true ? runWithdraw(args, io) : runRetake(args, io)),
};

interface Cost {
  readonly seconds: number;
  /** Undefined without a price list, or when one of the retakes is not priced there. */
  readonly credits: number | undefined;
}

function resolutionOf(row: JobRow): Resolution | undefined {
  return readStoredSpec(row.spec_json).resolution as Resolution | undefined;
}

/** What `rows` retaken cost: the same model, resolution and length each. */
function costOf(rows: readonly JobRow[], prices: PriceTable | undefined): Cost {
  let credits: number | undefined = prices && 0;
  for (const row of rows) {
    const each = prices && videoCredits(prices, row.model as Model, resolutionOf(row), row.seconds);
    credits = credits === undefined || each === undefined ? undefined : credits + each;
  }
  return { seconds: rows.reduce((sum, row) => sum + row.seconds, 0), credits };
}

function costLine(count: number, cost: Cost, prices: PriceTable | undefined): string {
  const round = (n: number): number => Math.round(n * 100) / 100;
  const what = `${plural(count, "paid generation")}, ${cost.seconds} s of video`;
  const credits =
    prices === undefined
      ? "no price list to say the credits (see --prices)"
      : cost.credits === undefined
        ? `not all priced by ${prices.file}`
        : `${round(cost.credits)} credits by ${prices.file}`;
  return `${what} (${credits})`;
}

/** On a terminal, unless --yes: whether the user wants it done. Elsewhere: yes, as asked. */
async function confirmed(args: ParsedArgs, io: CliIO, question: string): Promise<boolean> {
  if (args.values.yes === true || io.stdin?.isTTY !== true) return true;
  const prompt = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  try {
    const answer = await prompt.question(`${question} [y/N] `, { signal: io.signal });
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false; // interrupted
  } finally {
    prompt.close();
  }
}

async function runRetake(args: ParsedArgs, io: CliIO): Promise<number> {
  const given = reviewerGiven(args, io);
  const note = noteGiven(args);
  const json = args.values.json === true;
  const target = await findReviewTarget("retake", args.positionals, args, io);
  const unended = target.rows.filter((row) => !ENDED.has(row.state));
  if (unended.length > 0) {
    const named = unended.map(
      (row) => `${row.job_key} (${row.state === "pending" ? "unsent" : (row.task_status ?? row.state)})`,
    );
    throw new UsageError(
      `${named.join(", ")}: not ended yet; retake a take once it is made or failed; nothing was queued`,
    );
  }
  const prices = findPriceTable({
    given: typeof args.values.prices === "string" ? args.values.prices : envSetting(io.env, "REEL_PRICES"),
    anchorDir: target.place.anchor.dir,
    cwd: io.cwd,
  });
  const reviewer = await reviewerOf(given, "retake", io);
  io.stderr.write(`reel retake: ${workplaceLine(target.place, io.cwd, true)}\n`);
  const cost = costOf(target.rows, prices);
  const line = costLine(target.rows.length, cost, prices);
  io.stderr.write(`reel retake: ${line}, on ${serviceFlag(target.baseUrl)}\n`);
  if (!(await confirmed(args, io, "Queue them?"))) {
    io.stderr.write("reel retake: nothing was queued\n");
    return EXIT.someJobsFailed;
  }
  const store = await openStateToReview(target.place.statePath, target.baseUrl, target.place.storeUrl);
  const queued: { row: JobRow; retake: RetakeRow; seed: number | null }[] = [];
  try {
    for (const row of target.rows) {
      let seed: number | null = null;
      const retake = await store.queueRetake({
        from: { key: row.job_key, specHash: row.spec_hash },
        reviewer,
        note: note ?? null,
        plan: (video) => {
          const job = planRetake(row, video);
          seed = (JSON.parse(job.specJson) as { seed: number }).seed;
          return job;
        },
      });
      queued.push({ row, retake, seed });
    }
  } finally {
    await store.close();
  }
  if (json) {
    const retakes = queued.map(({ row, retake, seed }) => ({
      job: retake.key,
      manifest: retake.manifest,
      id: retake.videoId,
      specHash: retake.specHash,
      from: row.job_key,
      seed,
      model: row.model,
      resolution: resolutionOf(row) ?? null,
      seconds: row.seconds,
      reviewer,
      note: retake.note,
    }));
    const total = { seconds: cost.seconds, credits: cost.credits ?? null, prices: prices?.file ?? null };
    io.stdout.write(
      `${JSON.stringify({ ok: true, action: "retake", service: target.baseUrl, retakes, cost: total })}\n`,
    );
    return EXIT.ok;
  }
  for (const { row, retake, seed } of queued) {
    io.stdout.write(
      `queued ${retake.key}: a retake of ${row.job_key}${seed === null ? "" : ` (seed ${seed})`}; ${row.job_key} rejected${retake.note === null ? "" : `: '${retake.note}'`}\n`,
    );
  }
  io.stderr.write(
    `reel retake: the next run of ${[...new Set(queued.map((q) => q.retake.manifest))].join(", ")}'s manifest (or a running watch) sends ${agree(queued.length, "it", "them")}; reel retake --withdraw ${queued[0]!.retake.key} takes ${agree(queued.length, "it", "one")} back until then\n`,
  );
  return EXIT.ok;
}

async function runWithdraw(args: ParsedArgs, io: CliIO): Promise<number> {
  const json = args.values.json === true;
  const target = await findReviewTarget("retake --withdraw", args.positionals, args, io);
  io.stderr.write(`reel retake: ${workplaceLine(target.place, io.cwd, true)}\n`);
  const store = await openStateToReview(target.place.statePath, target.baseUrl, target.place.storeUrl);
  const done: { row: JobRow; retake: RetakeRow }[] = [];
  try {
    const retakes = new Map(
      (await store.listRetakes()).filter((r) => r.state !== "withdrawn").map((r) => [r.key, r]),
    );
    // Every one checked before any is withdrawn: a refusal changes nothing.
    const refused: string[] = [];
    for (const row of target.rows) {
      const retake = retakes.get(row.job_key);
      if (retake === undefined) refused.push(`${row.job_key} is not a retake`);
      else if (retake.state !== "queued") refused.push(`${row.job_key} was sent already`);
      else done.push({ row, retake });
    }
    if (refused.length > 0) throw new UsageError(`${refused.join("; ")}: nothing was withdrawn`);
    for (const item of done) {
      // The run may claim it meanwhile: then it is sent, and said so.
      if ((await store.withdrawRetake(item.row.job_key)) === "sent") {
        throw new UsageError(
          `${item.row.job_key} was sent by a run just now: too late to withdraw${
            done.indexOf(item) > 0
              ? ` (withdrawn before it: ${done
                  .slice(0, done.indexOf(item))
                  .map((d) => d.row.job_key)
                  .join(", ")})`
              : ""
          }`,
        );
      }
    }
  } finally {
    await store.close();
  }
  if (json) {
    const withdrawn = done.map(({ retake }) => ({
      job: retake.key,
      from: retake.fromKey,
      specHash: retake.specHash,
    }));
    io.stdout.write(
      `${JSON.stringify({ ok: true, action: "withdraw", service: target.baseUrl, withdrawn })}\n`,
    );
    return EXIT.ok;
  }
  for (const { retake } of done) {
    io.stdout.write(`withdrew ${retake.key} (a retake of ${retake.fromKey}); nothing was sent for it\n`);
  }
  return EXIT.ok;
}
