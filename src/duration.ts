// Durations as users write them on the command line (500ms, 90s, 30m, 6h, 2d) and as messages show them.

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of "500ms", "90s", "30m", "1.5h", "2d"; undefined when `text` is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|[smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > 0 && Number.isFinite(ms) ? ms : undefined;
}

/**
 * "2.5 s", "42 s", "3 min 20 s", "2 h 5 min", "2 d 3 h": exact to a tenth of a second when short,
 * then to the unit below the largest, which is as exact as a reader takes in (a wait, a deadline,
 * an ETA, the seconds of video in a report). A part that is zero is left out ("30 min", "24 h").
 */
export function formatDuration(ms: number): string {
  if (ms < 9_950) return `${Math.round(ms / 100) / 10} s`;
  const inSeconds = Math.round(ms / 1_000);
  if (inSeconds < 60) return `${inSeconds} s`;
  if (inSeconds < 3_600) return twoUnits(inSeconds, 60, "min", "s");
  const inMinutes = Math.round(ms / 60_000);
  if (inMinutes < 48 * 60) return twoUnits(inMinutes, 60, "h", "min");
  return twoUnits(Math.round(ms / 3_600_000), 24, "d", "h");
}

function twoUnits(count: number, perBig: number, big: string, small: string): string {
  const rest = count % perBig;
  const whole = `${Math.floor(count / perBig)} ${big}`;
  return rest === 0 ? whole : `${whole} ${rest} ${small}`;
}
