// `reel approve JOB...`, `reel reject JOB... [--note TEXT]`, `reel undecide JOB...`: a reviewer's
// decisions on takes, recorded in the store (docs/review.md) beside any run or watch using it. Every
// job is checked before anything is recorded: one that does not exist, or (approve, reject) a take
// without a video, refuses the whole command (exit 2, nothing changed).
import { UsageError } from "../errors/usage.js";
import { plural } from "../plural.js";
import { type DecisionFields, decisionFieldsOf } from "../output/decision-fields.js";
import {
  type DecisionAction,
  decisionsByVersion,
  type JobRow,
  type NewDecision,
  versionKey,
} from "../state/job-store.js";
import type { CliIO, Command, OptionsConfig, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { openStateToReview } from "./read-state.js";
import { findReviewTarget, serviceFlag } from "./review-target.js";
import { noteGiven, reviewerGiven, reviewerOf } from "./reviewer.js";
import { workplaceLine } from "./workplace.js";

type Action = "approve" | "reject" | "undecide";

const RECORDED: Readonly<Record<Action, DecisionAction>> = {
  approve: "approved",
  reject: "rejected",
  undecide: "cleared",
};

/** The options of every review command (approve, reject, undecide, retake). */
export const REVIEW_OPTIONS: OptionsConfig = {
  reviewer: { type: "string" },
  sandbox: { type: "boolean" },
  "base-url": { type: "string" },
  state: { type: "string" },
  store: { type: "string" },
  json: { type: "boolean" },
};

export const REVIEW_USAGE = `JOB: as --only takes it: manifest/id, manifest/id~2 for a take, or a glob ('shop/*', 'intro' for
intro in any manifest). Each names a job's current version: an edited video is a new job, undecided.

Options:
  --reviewer NAME    who decides (env REEL_REVIEWER); asked for on a terminal, else required
  --sandbox          the jobs run with --sandbox
  --base-url URL     the jobs run against this service (env REEL_BASE_URL; default: the one
                     service the state has jobs of)
  --state FILE       state file (env REEL_STATE; default: the project's, found from the current
                     folder as run finds it)
  --store URL        the shared store on PostgreSQL (env REEL_STORE)
  --json             machine-readable output on stdout`;

const DECIDE_NOTE = `Decisions are kept in the store, with who and when; a run or watch using it goes on meanwhile.
results.jsonl, each job's record and index.html carry them from the end of the next run (a
running watch: within seconds).`;

const EXIT_TEXT = (what: string): string =>
  `Exit codes: 0 recorded (or already so), 2 ${what}, no reviewer, or bad options: nothing recorded.`;

function makeDecideCommand(action: Action, usage: string, options: OptionsConfig): Command {
  return { name: action, usage, options, run: (args, io) => runDecide(action, args, io) };
}

export const approveCommand = makeDecideCommand(
  "approve",
  `Usage: reel approve JOB... [--reviewer NAME] [options]

${REVIEW_USAGE}

${DECIDE_NOTE}

${EXIT_TEXT("a job that does not exist or a take without a video")}`,
  REVIEW_OPTIONS,
);

export const rejectCommand = makeDecideCommand(
  "reject",
  `Usage: reel reject JOB... [--note TEXT] [--reviewer NAME] [options]

${REVIEW_USAGE.replace("\n  --sandbox", "\n  --note TEXT        why, kept with the decision\n  --sandbox")}

${DECIDE_NOTE} To generate one more take instead: reel retake.

${EXIT_TEXT("a job that does not exist or a take without a video")}`,
  { ...REVIEW_OPTIONS, note: { type: "string" } },
);

export const undecideCommand = makeDecideCommand(
  "undecide",
  `Usage: reel undecide JOB... [--reviewer NAME] [options]

${REVIEW_USAGE}

${DECIDE_NOTE} The decisions cleared stay in the history.

${EXIT_TEXT("a job that does not exist")}`,
  REVIEW_OPTIONS,
);

/** "approved by ana", "rejected by bob: 'too dark'", "undecided". */
export function describeDecision(fields: DecisionFields): string {
  if (fields.decision === null) return "undecided";
  return `${fields.decision} by ${fields.reviewer}${fields.note === null ? "" : `: '${fields.note}'`}`;
}

interface Outcome {
  readonly row: JobRow;
  readonly was: DecisionFields;
  readonly now: DecisionFields;
  readonly changed: boolean;
}

async function runDecide(action: Action, args: ParsedArgs, io: CliIO): Promise<number> {
  const given = reviewerGiven(args, io);
  const note = action === "reject" ? noteGiven(args) : undefined;
  const json = args.values.json === true;
  const target = await findReviewTarget(action, args.positionals, args, io);
  if (action !== "undecide") {
    // Only a take with a video can be chosen or turned down; a failed one can be retaken.
    const without = target.rows.filter((row) => row.state !== "Success");
    if (without.length > 0) {
      const named = without.map(
        (row) => `${row.job_key} (${row.state === "pending" ? "unsent" : row.state})`,
      );
      throw new UsageError(
        `${named.join(", ")}: no video to ${action}, only a take that was generated can be; nothing was changed${action === "reject" ? " (a failed take can be retaken: reel retake)" : ""}`,
      );
    }
  }
  const reviewer = await reviewerOf(given, action, io);
  io.stderr.write(`reel ${action}: ${workplaceLine(target.place, io.cwd, true)}\n`);
  const decision = RECORDED[action];
  const store = await openStateToReview(target.place.statePath, target.baseUrl, target.place.storeUrl);
  let outcomes: Outcome[];
  try {
    const versions = target.rows.map((row) => ({ key: row.job_key, specHash: row.spec_hash }));
    const before = decisionsByVersion(await store.latestDecisions(versions));
    const wanted: NewDecision[] = [];
    const pending = target.rows.map((row) => {
      const was = decisionFieldsOf(before.get(versionKey(row.job_key, row.spec_hash)));
      const same =
        decision === "cleared"
          ? was.decision === null
          : was.decision === decision && was.reviewer === reviewer && was.note === (note ?? null);
      if (!same) {
        wanted.push({ key: row.job_key, specHash: row.spec_hash, decision, reviewer, note: note ?? null });
      }
      return { row, was, same };
    });
    const recorded = decisionsByVersion(await store.recordDecisions(wanted));
    outcomes = pending.map(({ row, was, same }) => ({
      row,
      was,
      changed: !same,
      now: same ? was : decisionFieldsOf(recorded.get(versionKey(row.job_key, row.spec_hash))),
    }));
  } finally {
    await store.close();
  }
  if (json) {
    const jobs = outcomes.map(({ row, was, now, changed }) => ({
      job: row.job_key,
      manifest: row.manifest,
      id: row.video_id,
      specHash: row.spec_hash,
      changed,
      ...now,
      was,
    }));
    io.stdout.write(`${JSON.stringify({ ok: true, action, service: target.baseUrl, reviewer, jobs })}\n`);
    return EXIT.ok;
  }
  const lines = outcomes.map(({ row, was, now, changed }) =>
    !changed
      ? `${row.job_key}: already ${describeDecision(was)}`
      : `${action === "undecide" ? "cleared" : now.decision} ${row.job_key}${action === "reject" && now.note !== null ? `: '${now.note}'` : ""}${was.decision === null ? "" : ` (was ${describeDecision(was)})`}`,
  );
  io.stdout.write(`${lines.join("\n")}\n`);
  const changed = outcomes.filter((o) => o.changed).length;
  if (changed > 0 && target.rows.length > 1) {
    io.stderr.write(
      `reel ${action}: ${changed} of ${plural(target.rows.length, "job")} changed, by ${reviewer}, on ${serviceFlag(target.baseUrl)}\n`,
    );
  }
  return EXIT.ok;
}
