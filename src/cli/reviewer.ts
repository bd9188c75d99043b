// Who decides, and what they note: every decision records its reviewer. The name comes from
// --reviewer, else REEL_REVIEWER, else (on a terminal) it is asked for; a script without either is
// refused rather than recorded under a made-up name.
import { createInterface } from "node:readline/promises";
import { UsageError } from "../errors/usage.js";
import type { CliIO, ParsedArgs } from "./command.js";
import { envSetting } from "./service-options.js";
import { checkNote, checkReviewer } from "../review/reviewer-rules.js";

/** --reviewer, else REEL_REVIEWER, checked; undefined when neither is given. */
export function reviewerGiven(args: ParsedArgs, io: CliIO): string | undefined {
  const flag = args.values.reviewer;
  if (typeof flag === "string") return checkReviewer(flag, "--reviewer");
  const env = envSetting(io.env, "REEL_REVIEWER");
  return env === undefined ? undefined : checkReviewer(env, "REEL_REVIEWER");
}

/**
 * The reviewer: `given` (reviewerGiven), else asked for on a terminal; refused when stdin is not one
 * (a script, a pipe), where nobody could answer.
 */
export async function reviewerOf(given: string | undefined, command: string, io: CliIO): Promise<string> {
  if (given !== undefined) return given;
  if (io.stdin?.isTTY !== true) {
    throw new UsageError(
      `who decides? give --reviewer NAME or set REEL_REVIEWER (every decision records its reviewer); nothing was changed`,
    );
  }
  const prompt = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  try {
    const answer = await prompt.question(
      `reel ${command}: your name, recorded with the decision (set REEL_REVIEWER to skip this): `,
      { signal: io.signal },
    );
    return checkReviewer(answer, "the name given");
  } catch (error) {
    if (io.signal.aborted) throw new UsageError("no reviewer given (interrupted); nothing was changed");
    throw error;
  } finally {
    prompt.close();
  }
}

/** --note, checked; undefined when not given. */
export function noteGiven(args: ParsedArgs): string | undefined {
  const note = args.values.note;
  return typeof note === "string" ? checkNote(note, "--note") : undefined;
}
