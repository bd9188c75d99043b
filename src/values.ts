// Checks and bounds of plain values that many parts need, defined once.

/** A mapping (not null, not an array): what YAML, JSON or a recorded spec holds as an object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The largest signed 64-bit integer: the service's ids (tasks, assets, voices) are int64, so a seed
 * or an id past it is no value the service takes.
 */
export const INT64_MAX = 2n ** 63n - 1n;
