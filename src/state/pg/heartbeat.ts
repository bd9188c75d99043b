// A writer's heartbeat: every `everyMs` it records that its runner is alive, on a
// connection of its own, so a beat never queues behind the writer's statements (which run one at a
// time, in order, on the store's one connection) and says only whether the process lives and
// reaches the database. A beat that fails (the server restarting, the network gone) must not crash
// the process: it is kept as `lastError`, and the next beat retries. Beats never overlap: the next is
// timed from the end of the last. The timer is unref'd: it keeps no process alive. A beat that finds
// its runner stopped (marked lost by another runner that took its work over) ends the beats and
// says so once (`onRevoked`): the runner must stop.
import type pg from "pg";
import { beat } from "./sql/runners.js";

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  /** The last beat's error, until a beat succeeds; undefined while the beats are recorded. */
  lastError: Error | undefined;
  /** Whether, at the last beat, some process followed every runner's events (../event-notices.ts). */
  followed = false;
  /** When the lease was last confirmed (performance.now(): monotonic), by a beat or by `confirmed`. */
  confirmedAt = performance.now();

  constructor(
    private readonly pool: pg.Pool,
    private readonly runnerId: number,
    private readonly everyMs: number,
    private readonly onRevoked: () => void,
  ) {
    this.schedule();
  }

  /** A write that touched the runner's row (a fenced claim) confirmed the lease too. */
  confirmed(): void {
    this.confirmedAt = performance.now();
  }

  /** Stops the beats, waiting for one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.beating;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.beating = undefined;
        this.schedule();
      });
    }, this.everyMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      const beaten = await beat({ pool: this.pool }, this.runnerId, 2 * this.everyMs);
      this.followed = beaten.followed;
      if (!beaten.alive) {
        this.stopped = true;
        this.onRevoked();
        return;
      }
      this.lastError = undefined;
      this.confirmed();
    } catch (error) {
      this.lastError = error instanceof Error ? error : new Error(String(error));
    }
  }
}
