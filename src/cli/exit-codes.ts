// Exit codes of PRODUCT.md ("Commands"). Scripts depend on these numbers.
export const EXIT = {
  ok: 0,
  someJobsFailed: 1,
  invalidInput: 2,
  fatalService: 3,
  interrupted: 130,
} as const;
