// Every error reel raises on purpose derives from ReelError and carries a stable `code`, so callers
// (the engine, the CLI, tests) branch on codes rather than on message text.

export class ReelError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad user input (flags, environment, files): reported without a stack trace, exit code 2. */
export class UsageError extends ReelError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("E_USAGE", message, options);
  }
}

/**
 * The disk under the output folder refused a write during the work: full (ENOSPC), over quota
 * (EDQUOT), read-only (EROFS) or failing (EIO). Trying again cannot help and every other video would
 * meet the same: the work stops at once (exit 3), nothing lost, and a rerun resumes.
 */
export class OutputDiskError extends ReelError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("E_OUTPUT_DISK", message, options);
  }
}
