// V8's garbage collector, tuned for reel's workload: a batch allocates fast (HTTP exchanges, rows,
// promises) but keeps little alive (about 35 MB for 10,000 jobs). By default V8 lets the old
// generation grow to about four times the live size between full collections, so a 10,000-job run
// peaked near 250 MB of RSS holding mostly garbage. Growing by 1.5x keeps it under 200 MB at no
// measurable CPU cost (`node bench/engine-bench.js overhead`).
// The young generation is kept at its starting size (two halves of 1 MB) rather than grown to 32 MB
// while a big manifest is read: that much less RSS at a run's peak, its start (about 30 MB at
// 100,000 jobs), for more frequent but smaller collections of the young objects. Set after V8 has
// sized the heap, a factor of 1 is taken as it is (given as a command-line flag, V8 raises it to 2).
import { setFlagsFromString } from "node:v8";

/** Called once by the CLI's entry point (and by the benchmark, to measure what the CLI does). */
export function tuneHeapForBatches(): void {
  setFlagsFromString("--heap-growing-percent=50");
  setFlagsFromString("--semi-space-growth-factor=1");
}
