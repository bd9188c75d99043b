// How often a watch rewrites its reports. Results may arrive by the hundred a second; each rewrite
// reads every row and writes every job (a second or more at 100,000 jobs, on the same thread as the
// engine), so changes are gathered: one write at a time, a short delay after a quiet spell, then at
// most one write every few seconds, and further apart when a write takes long. The last change is
// always written: by the write after it, and by the watch's own last write when it stops.

/** The least time between the starts of two writes. As the page's own reloads: see html-report.ts. */
export const REPORT_GAP_MS = 3_000;
/** After a quiet spell: changes that come together are written together. */
const FIRST_DELAY_MS = 200;
/** A write that took `d` is followed by the next no sooner than `d` times this: reports take a fifth of the time at most. */
const DURATION_FACTOR = 5;

export class ReportThrottle {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private pending = false;
  private stopped = false;
  private lastStart = -Infinity;
  private lastMs = 0;

  /** `write` rejects: the next change tries again (the watch's last write reports a failure). */
  constructor(private readonly write: () => Promise<void>) {}

  /** Something the reports show has changed. */
  changed(): void {
    if (this.stopped) return;
    this.pending = true;
    if (this.running === undefined && this.timer === undefined) this.schedule();
  }

  /** No more writes from here; resolves once the one under way (if any) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    const gap = Math.max(REPORT_GAP_MS, DURATION_FACTOR * this.lastMs);
    const delay = Math.max(FIRST_DELAY_MS, this.lastStart + gap - performance.now());
    this.timer = setTimeout(() => this.run(), delay);
  }

  private run(): void {
    this.timer = undefined;
    this.pending = false;
    const start = performance.now();
    this.lastStart = start;
    this.running = this.write()
      .catch(() => {})
      .finally(() => {
        this.lastMs = performance.now() - start;
        this.running = undefined;
        if (this.pending && !this.stopped) this.schedule();
      });
  }
}
