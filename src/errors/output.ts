// The output folder's errors: its disk refusing a write, and what a result download that failed
// means: whether asking the service for a fresh address, trying again, or neither can help. The
// engine branches on it (see engine/deliver.ts).
import { type ErrorCode, ReelError } from "./reel-error.js";

/**
 * - "expired": the URL no longer serves the file: ask the service for a fresh one.
 * - "retry": the transfer broke (truncated, reset, 5xx): try again, resuming where possible.
 * - "refused": the content or address is not acceptable: trying again will not help.
 */
export type DownloadFailure = "expired" | "retry" | "refused";

const DOWNLOAD_CODES = {
  expired: "E_DOWNLOAD_EXPIRED",
  retry: "E_DOWNLOAD_RETRY",
  refused: "E_DOWNLOAD_REFUSED",
} as const satisfies Record<DownloadFailure, ErrorCode>;

export class DownloadError extends ReelError {
  readonly failure: DownloadFailure;

  constructor(message: string, failure: DownloadFailure = "refused") {
    super(DOWNLOAD_CODES[failure], message);
    this.failure = failure;
  }

  get expired(): boolean {
    return this.failure === "expired";
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
