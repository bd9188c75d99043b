// Exit codes of the README ("Commands"). Scripts depend on these numbers.
export const EXIT = {
  ok: 0,
  someJobsFailed: 1,
  invalidInput: 2,
  /** Stopped by the service (key, credits, unreachable) or a full output disk: a rerun resumes. */
  fatalService: 3,
  /** Stopped before spending more: the budget's cap (--max-seconds, --max-credits); a rerun with a higher cap resumes. */
  budgetReached: 3,
  interrupted: 130,
} as const;
