// Figures made of a round's measures, and how they are printed.
import { SLOTS } from "./settings.js";

/**
 * With the bound full, the k-th task to finish frees the slot that the (k + SLOTS)-th submission
 * takes: the time between them, for every slot freed while work was left.
 */
export function refillGaps(tasks) {
  const finishes = tasks
    .map((t) => t.finishedAt)
    .filter((t) => t !== undefined)
    .sort((a, b) => a - b);
  const creations = tasks.map((t) => t.createdAt).sort((a, b) => a - b);
  const gaps = [];
  for (let k = 0; k + SLOTS < creations.length && k < finishes.length; k++)
    gaps.push(Math.max(0, creations[k + SLOTS] - finishes[k]));
  return gaps;
}

export function percentile(values, p) {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : Number.NaN;
}

export const pct = (share) => `${Math.round(100 * share)}%`;
export const fmtS = (ms) => `${(ms / 1000).toFixed(2)} s`;
export const perJob = (seconds, n) => `${((seconds * 1000) / n).toFixed(2)} ms`;

/** Of a round's runs ({ runners, pg } CPU seconds), the one of median total; undefined for none. */
export function medianRun(runs) {
  if (!runs?.length) return undefined;
  const sorted = [...runs].sort((a, b) => a.runners + a.pg - (b.runners + b.pg));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
