// Exit codes of PRODUCT.md ("Commands"). Scripts depend on these numbers.
export const EXIT = {
  ok: 0,
  someJobsFailed: 1,
  invalidInput: 2,
  /** Stopped by the service (key, credits, unreachable) or a full output disk: a rerun resumes. */
  fatalService: 3,
  interrupted: 130,
} as const;
