// `reel budget set NAME --max-seconds N | --max-credits N [--prices FILE]` and `reel budget show
// [NAME]`: named budgets, kept in the store (src/budget/named.ts). Set by whoever holds the money,
// once; every run and watch that names one (--budget NAME, or reel.yaml's budget) spends from it.
// Written beside the runs and watches that hold the store, as `reel approve` writes: a state file is
// not locked for it (the write waits, up to 5 s, for the turn a run is committing), a PostgreSQL
// store registers no runner. A running watch reads the new cap at its next claim.
import { existsSync } from "node:fs";
import { priceTableJson } from "../budget/named.js";
import { sharedCapText, sharedJson, sharedSpentText } from "../budget/messages.js";
import { UsageError } from "../errors/usage.js";
import { findPriceTable } from "../prices/index.js";
import { type BudgetStore, openBudgetStore } from "../state/open-job-store.js";
import type { NamedBudget, NamedBudgetChange } from "../state/job-store.js";
import { StateFileError } from "../errors/state.js";
import { capValue, checkBudgetName } from "./budget-options.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { openStateToRead } from "./read-state.js";
import { envSetting, flagValue, type Workplace, workplaceOf } from "./workplace.js";

const USAGE = `Usage: reel budget set NAME (--max-seconds N | --max-credits N [--prices FILE]) [options]
       reel budget show [NAME] [options]

A named budget is one cap for every run and watch that names it (run/watch --budget NAME, or
'budget: NAME' in reel.yaml), on every machine sharing the store: each submission (and, in
credits, each speech call its price list prices) spends from it as it is claimed, so no mix of
runners passes it. At it, a run stops as at its own cap (exit 3). The cap is the total for the
budget's life: what was spent stays spent.

  set NAME           create the budget, or change its cap (a cap not given is kept); a runner
                     stopped at it goes on when rerun, a running watch at its next submission
  show [NAME]        what each budget (or NAME) has spent and has left

Options:
  --max-seconds N    the most seconds of video it pays for, in all
  --max-credits N    the most credits, priced by the price list it is set with (kept in the
                     store, so that every runner prices alike)
  --prices FILE      that price list (env REEL_PRICES; default: prices.yaml beside the project's
                     reel.yaml, or the state, if there); given again, it replaces the one kept
  --store URL        the shared store on PostgreSQL (env REEL_STORE; default: the project's)
  --state FILE       the state file (env REEL_STATE; default: the project's)
  --json             machine-readable output on stdout

Exit codes: 0 done, 2 bad options, a budget that does not exist (show NAME), or a store that
cannot be used.`;

export const budgetCommand: Command = {
  name: "budget",
  usage: USAGE,
  options: {
    "max-seconds": { type: "string" },
    "max-credits": { type: "string" },
    prices: { type: "string" },
    store: { type: "string" },
    state: { type: "string" },
    json: { type: "boolean" },
  },
  run: async (args, io) => {
    const [action, ...rest] = args.positionals;
    if (action === "set") return runSet(rest, args, io);
    if (action === "show") return runShow(rest, args, io);
    throw new UsageError(
      action === undefined
        ? "say what to do: reel budget set NAME --max-seconds N, or reel budget show [NAME]"
        : `unknown action '${action}': reel budget set NAME ..., or reel budget show [NAME]`,
    );
  },
};

/** One budget as a line: its caps, what it spent and what is left. */
function budgetLine(row: NamedBudget): string {
  return `${row.name}: ${sharedCapText(row)}${row.prices ? ` (prices: ${row.prices.file})` : ""}; ${sharedSpentText(row)}`;
}

async function withBudgetStore<T>(place: Workplace, use: (store: BudgetStore) => Promise<T>): Promise<T> {
  let store: BudgetStore;
  try {
    store = await openBudgetStore(place.statePath, place.storeUrl);
  } catch (error) {
    throw error instanceof StateFileError ? new UsageError(error.message, { cause: error }) : error;
  }
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

async function runSet(names: readonly string[], args: ParsedArgs, io: CliIO): Promise<number> {
  if (names.length !== 1) throw new UsageError("name one budget: reel budget set NAME --max-seconds N");
  const name = names[0]!;
  checkBudgetName(name);
  const maxSeconds = capValue("--max-seconds", args.values["max-seconds"]);
  const maxCredits = capValue("--max-credits", args.values["max-credits"]);
  const givenPrices = flagValue(args.values, "prices") ?? envSetting(io.env, "REEL_PRICES");
  if (maxSeconds === undefined && maxCredits === undefined && givenPrices === undefined) {
    throw new UsageError(`give the cap: reel budget set ${name} --max-seconds N (or --max-credits N)`);
  }
  const place = workplaceOf([], args, io);
  return withBudgetStore(place, async (store) => {
    const before = await store.findBudget(name);
    // A list given is kept with the budget; else, for a cap in credits, the one found beside the
    // project, unless the budget keeps one already.
    const wantsList = givenPrices !== undefined || (maxCredits !== undefined && !before?.prices);
    const prices = wantsList
      ? findPriceTable({ given: givenPrices, anchorDir: place.anchor.dir, cwd: io.cwd })
      : undefined;
    if (maxCredits !== undefined && !prices && !before?.prices) {
      throw new UsageError(
        `--max-credits needs a price list: the service publishes none. Write prices.yaml beside reel.yaml (README: Prices), or give --prices FILE; nothing was set`,
      );
    }
    // Spent with no list, its credits are unknown: a cap in credits could not count them.
    if (maxCredits !== undefined && before && !before.prices && before.spentSeconds > 0) {
      throw new UsageError(
        `the budget '${name}' spent ${before.spentSeconds} s of video with no price list, so what that cost in credits is unknown: give a cap in credits to a budget of another name; nothing was set`,
      );
    }
    const change: NamedBudgetChange = {
      ...(maxSeconds !== undefined ? { maxSeconds } : {}),
      ...(maxCredits !== undefined ? { maxCredits } : {}),
      ...(prices ? { prices: { file: prices.file, json: priceTableJson(prices) } } : {}),
    };
    const row = await store.setBudget(name, change);
    if (args.values.json === true) {
      io.stdout.write(
        `${JSON.stringify({ ok: true, action: before ? "changed" : "created", budget: sharedJson(row) })}\n`,
      );
    } else {
      io.stderr.write(`reel budget: ${before ? "changed" : "created"} ${budgetLine(row)}\n`);
    }
    return EXIT.ok;
  });
}

async function runShow(names: readonly string[], args: ParsedArgs, io: CliIO): Promise<number> {
  if (names.length > 1) throw new UsageError("name one budget, or none: reel budget show [NAME]");
  const name = names[0];
  if (name !== undefined) checkBudgetName(name);
  const place = workplaceOf([], args, io);
  let rows: NamedBudget[] = [];
  if (place.storeUrl !== undefined || existsSync(place.statePath)) {
    const store = await openStateToRead(place.statePath, undefined, place.storeUrl);
    try {
      rows = await store.listBudgets();
    } finally {
      await store.close();
    }
  }
  if (name !== undefined) rows = rows.filter((row) => row.name === name);
  if (name !== undefined && rows.length === 0) {
    throw new UsageError(
      `no budget named '${name}' in the store: set it with reel budget set ${name} --max-seconds N`,
    );
  }
  if (args.values.json === true) {
    io.stdout.write(`${JSON.stringify({ ok: true, budgets: rows.map(sharedJson) })}\n`);
  } else if (rows.length === 0) {
    io.stdout.write("no budget is set: reel budget set NAME --max-seconds N makes one\n");
  } else {
    for (const row of rows) io.stdout.write(`${budgetLine(row)}\n`);
  }
  return EXIT.ok;
}
