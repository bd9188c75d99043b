// Bad user input: flags, environment, and the files reel reads besides manifests (the project file,
// the price list). Reported without a stack trace, exit code 2.
import { ReelError } from "./reel-error.js";

/** Bad user input (flags, environment, files): reported without a stack trace, exit code 2. */
export class UsageError extends ReelError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("E_USAGE", message, options);
  }
}

/**
 * A problem at its place in a file: what a message says of a manifest's Problem (src/manifest), named
 * here by its shape so that the errors import nothing of the parts above them.
 */
export interface PlacedProblem {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

/** A project file that cannot be used: its problems, each at `file:line:col`. */
export class ProjectFileError extends UsageError {
  constructor(readonly problems: readonly PlacedProblem[]) {
    super(
      `the project file cannot be used:\n${problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}`).join("\n")}`,
    );
    this.name = "ProjectFileError";
  }
}

/** A price file that cannot be used: every problem, one per line, at file:line:col. */
export class PriceFileError extends UsageError {
  constructor(problems: readonly string[]) {
    super(`the price list cannot be used:\n${problems.join("\n")}`);
    this.name = "PriceFileError";
  }
}
