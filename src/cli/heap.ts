// V8's garbage collector, tuned for reel's workload: a batch allocates fast (HTTP exchanges, rows,
// promises) but keeps little alive (about 35 MB for 10,000 jobs). By default V8 lets the old
// generation grow to about four times the live size between full collections, so a 10,000-job run
// peaked near 250 MB of RSS holding mostly garbage. Growing by 1.5x keeps it under 200 MB at no
// measurable CPU cost (`node bench/engine-bench.js overhead`).
// The young generation: V8 doubles it (up to 32 MB) whenever most of it survives a collection, as
// while a big manifest is parsed, where that was 30 MB of the peak RSS of a 100,000-job run's
// start. It stays at its first 2 MB while manifests are read (readingManifests), and grows to 16 MB
// at most afterwards: kept at 2 MB for the whole run, the young objects of a run's start (rows read,
// answers) reached the old generation and a rerun's first submission of 100,000 jobs came 0.5 to
// 1 s later. A growth factor of 1 is taken as given once V8 has sized the heap (as a command-line
// flag, V8 raises it to 2).
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

/** The size at which the young generation stops growing. */
const YOUNG_GENERATION_CAP = 16 * 1024 * 1024;

function youngGeneration(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;
}

/** Stops the young generation's growth once it has reached the cap; whether it has. */
function stopAtCap(): boolean {
  if (youngGeneration() < YOUNG_GENERATION_CAP) return false;
  setFlagsFromString("--semi-space-growth-factor=1");
  return true;
}

let observer: PerformanceObserver | undefined;

/** Checks the young generation after collections (it grows at one) until it reaches the cap. */
function capYoungGeneration(): void {
  if (stopAtCap()) return;
  observer = new PerformanceObserver(() => {
    if (stopAtCap()) stopObserving();
  });
  observer.observe({ entryTypes: ["gc"] });
}

function stopObserving(): void {
  observer?.disconnect();
  observer = undefined;
}

/** Called once by the CLI's entry point (and by the benchmark, to measure what the CLI does). */
export function tuneHeapForBatches(): void {
  setFlagsFromString("--heap-growing-percent=50");
  capYoungGeneration();
}

/** `read()`, the young generation kept as it is meanwhile (see above), and unobserved. */
export async function readingManifests<T>(read: () => Promise<T>): Promise<T> {
  stopObserving();
  setFlagsFromString("--semi-space-growth-factor=1");
  try {
    return await read();
  } finally {
    setFlagsFromString("--semi-space-growth-factor=2");
    capYoungGeneration();
  }
}
