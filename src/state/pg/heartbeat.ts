// A writer's heartbeat (issue 18): every `everyMs` it records that its runner is alive, on a
// connection of its own, so a beat never queues behind the writer's statements (which run one at a
// time, in order, on the store's one connection) and says only whether the process lives and
// reaches the database. A beat that fails (the server restarting, the network gone) must not crash
// the process: it is kept as `lastError`, and the next beat retries. Beats never overlap: the next is
// timed from the end of the last. The timer is unref'd: it keeps no process alive.
import type pg from "pg";
import { beat } from "./sql/runners.js";

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  /** The last beat's error, until a beat succeeds; undefined while the beats are recorded. */
  lastError: Error | undefined;
  /** When the last beat was recorded (this machine's clock, epoch milliseconds); 0 before the first. */
  lastBeatAt = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly runnerId: number,
    private readonly everyMs: number,
  ) {
    this.schedule();
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
      await beat({ pool: this.pool }, this.runnerId);
      this.lastError = undefined;
      this.lastBeatAt = Date.now();
    } catch (error) {
      this.lastError = error instanceof Error ? error : new Error(String(error));
    }
  }
}
