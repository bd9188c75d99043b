// Durations as users write them on the command line (500ms, 90s, 30m, 6h, 2d) and as messages show them.

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of "500ms", "90s", "30m", "1.5h", "2d"; undefined when `text` is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|[smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > 0 && Number.isFinite(ms) ? ms : undefined;
}

/** "45 s", "30 min", "6 h", "2 d": the largest unit that keeps it whole enough to read. */
export function formatDuration(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 2 * 86_400_000) return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
  return `${Math.round((ms / 86_400_000) * 10) / 10} d`;
}
