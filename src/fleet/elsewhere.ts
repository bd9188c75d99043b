// Jobs another runner of the fleet holds (a shared store): being submitted, their task
// followed, or their video being downloaded by it. This runner neither sends nor follows them; it
// waits, with one query a tick for all of them, until none holds them, then works on each again
// from its state then: a video made elsewhere is fetched into this runner's output folder if it is
// not there (never generated again), a submission cut off elsewhere is uncertain, a task let go is
// followed here. A runner silent past its lease no longer holds anything: its work is taken over
// (FleetStore.takeOverLost) before the jobs it held are worked on again.
import type { Logger } from "../log/logger.js";
import type { FleetStore } from "../state/job-store.js";

export interface ElsewhereWaiter {
  /** Resolves once no other live runner holds job `rowId` (or the engine stops). */
  until(rowId: number): Promise<void>;
  /** How many jobs wait. */
  readonly size: number;
  /** Stops the ticks; every wait resolves. */
  dispose(): void;
}

export function makeElsewhereWaiter(
  fleet: FleetStore,
  stop: AbortSignal,
  everyMs: number,
  log: Logger,
): ElsewhereWaiter {
  const waiting = new Map<number, () => void>();
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;

  function release(ids: Iterable<number>): void {
    for (const id of ids) {
      waiting.get(id)?.();
      waiting.delete(id);
    }
  }

  async function tick(): Promise<void> {
    ticking = true;
    try {
      const ids = [...waiting.keys()];
      const held = await fleet.heldElsewhere(ids);
      const free = ids.filter((id) => !held.has(id));
      // Some are free because their runner went silent: its work is sorted first, so that what it
      // held is found in its new state (uncertain, or a task free to follow).
      if (free.length > 0) {
        await fleet.takeOverLost();
        release(free);
      }
    } catch (error) {
      // The database unreachable for a moment: asked again at the next tick.
      log.warn({ err: (error as Error).message }, "could not ask the store about other runners' jobs");
    } finally {
      ticking = false;
      schedule();
    }
  }

  function schedule(): void {
    if (timer !== undefined || ticking || waiting.size === 0 || stop.aborted) return;
    timer = setTimeout(() => {
      timer = undefined;
      void tick();
    }, everyMs);
  }

  const onStop = (): void => dispose();
  stop.addEventListener("abort", onStop, { once: true });

  function dispose(): void {
    clearTimeout(timer);
    timer = undefined;
    release([...waiting.keys()]);
    stop.removeEventListener("abort", onStop);
  }

  return {
    until(rowId) {
      if (stop.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const before = waiting.get(rowId);
        waiting.set(rowId, () => {
          before?.();
          resolve();
        });
        schedule();
      });
    },
    get size() {
      return waiting.size;
    },
    dispose,
  };
}
