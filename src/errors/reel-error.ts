// Every error reel raises on purpose derives from ReelError and carries a stable `code`, so callers
// (the engine, the CLI, tests) branch on codes rather than on message text. Every code is listed
// in ERROR_CODES, with the class that raises it: a misspelled code is a type error. Every error
// class lives in this folder (src/errors/), one file per part of reel that raises it; the folder
// imports nothing of the rest of reel, so every part may raise and catch any of them.

/** Every code a ReelError may carry, by the part of reel that raises it. */
export const ERROR_CODES = [
  // usage.ts, output.ts, and a plain ReelError
  "E_USAGE", // UsageError (and ProjectFileError, PriceFileError): bad flags, environment or files (exit 2)
  "E_OUTPUT_DISK", // OutputDiskError (output.ts): the output folder's disk refused a write (exit 3)
  "E_INTERRUPTED", // the abort reason of Ctrl-C / SIGTERM, and of a submission cut off by it
  // service.ts: a call to the service
  "E_AUTH", // AuthError: 401 (or 403)
  "E_CREDITS", // CreditsError: 402, or a 4xx about credits
  "E_VALIDATION", // ValidationError: 422
  "E_RATE_LIMITED", // RateLimitError: 429
  "E_NOT_FOUND", // NotFoundError: 404
  "E_SERVER", // ServerError: 5xx
  "E_REQUEST", // RequestError: any other 4xx
  "E_NETWORK", // NetworkError
  "E_TIMEOUT", // TimeoutError
  "E_PROTOCOL", // ProtocolError: an answer reel cannot read
  "E_OUTCOME_UNKNOWN", // OutcomeUnknownError: a costed call that may have taken effect
  "E_UNEXPECTED_ANSWER", // UnexpectedAnswerError: a paid call answered with an undefined status
  "E_TASK_ID_HELD", // TaskIdHeldError: a submission answered with a task id another job holds
  "E_UNREACHABLE", // ServiceUnreachableError: never answered at all
  "E_DECODE", // DecodeError: an answer's JSON unreadable; the client makes it an E_PROTOCOL
  "E_CALL_DEADLINE", // CallDeadlineError: no whole answer within the call's deadline
  // state.ts: the state file
  "E_STATE_FILE", // StateFileError: damaged, foreign or unreadable (found at start)
  "E_STATE_WRITE", // StateFileError: a write failed during the work
  "E_STATE_CLAIMED", // ClaimLostError: another process moved the row on
  "E_STATE_LOCKED", // StateLockedError: another reel holds the state file
  "E_LEASE_LOST", // LeaseLostError: a runner of a shared store was taken over, and stops
  "E_STORE_UNREACHABLE", // StoreUnreachableError: a shared store stayed unreachable past the limit
  // budget.ts: a capped run
  "E_BUDGET", // BudgetStoppedError: a costed call the cap stopped before it was made; BudgetReachedError (src/state/named-budget.ts): a named budget had no room
  // engine.ts: the work
  "E_SPEECH_UNCERTAIN", // SpeechUncertainError
  "E_SOURCE_CHANGED", // SourceChangedError: a file changed after reel checked it (reel export's too)
  "E_REMOTE_SOURCE", // an https source could not be fetched
  "E_PRIVATE_SOURCE", // PrivateSourceError: an https source on a private address
  "E_OTHER_SERVICE", // SentElsewhereError: jobs already sent to another base URL; AddressInUseError (state.ts): another address in use
  // output.ts (and src/output's plain ReelErrors): the output folder and the downloads into it
  "E_OUT_LOCKED", // another reel holds the output folder
  "E_OUTPUT_PATH", // the output folder (or a file in it) cannot be used
  "E_DOWNLOAD_EXPIRED", // DownloadError("expired"): the result address expired
  "E_DOWNLOAD_RETRY", // DownloadError("retry"): broke off, worth another try
  "E_DOWNLOAD_REFUSED", // DownloadError("refused"): trying again cannot help
  // raised by reel export as a plain ReelError
  "E_EXPORT_SOURCE", // reel export: a chosen video is missing or not what reel wrote (exit 1)
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Codes that appear in the `--json` error document only, never on a ReelError: a manifest found
 * invalid (`E_INVALID`), and an error that is no ReelError (a bug: `E_INTERNAL`).
 */
export type ReportCode = ErrorCode | "E_INVALID" | "E_INTERNAL";

export class ReelError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
