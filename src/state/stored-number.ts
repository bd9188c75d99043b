// An integer column as a number, however the backend hands it back: PostgreSQL's driver gives bigint
// columns (ids, times, sizes) as strings, so that no int8 loses precision; SQLite gives numbers. The
// row decoders both backends share (review-rows.ts) read through it.

/** An integer column as a number (a bigint's string parsed); a value past 2^53 is a damaged row. */
export function toNumber(value: unknown): number {
  if (typeof value === "number") return value;
  const n = Number(value);
  // Ids, epoch milliseconds and file sizes are far below 2^53; anything else is a damaged row.
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer in the store: ${String(value)}`);
  return n;
}

export function toNumberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}
