// The engine's sleeps (between polls, after a refusal, while paused): each ends early, without an
// error, once work stops. node:timers/promises' setTimeout with a signal does the same but costs
// about three times as much per sleep (an abort listener added and removed on a signal that every
// sleeping poll shares), and a run sleeps at least once per video.

/**
 * The longest delay a Node timer keeps: past 2^31-1 ms (24.8 days) setTimeout fires after 1 ms. A
 * service's Retry-After of 999999999 s once made reel submit 50 times in 0.2 s. Every sleep of the
 * engine goes through here and is clamped; waits the engine will not sit through are decided by the
 * engine (LONGEST_WAIT_MS), not by the timer's range.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a timer can take it: a whole number of milliseconds from 0 to MAX_TIMER_MS (NaN: 0). */
export function timerDelay(ms: number): number {
  return ms > 0 ? Math.min(MAX_TIMER_MS, Math.ceil(ms)) : 0;
}

/** Returns `sleep(ms)`, which resolves after `ms`, or at once when `signal` is (or becomes) aborted. */
export function makeStoppableSleep(signal: AbortSignal): (ms: number) => Promise<void> {
  const sleeping = new Set<() => void>();
  signal.addEventListener(
    "abort",
    () => {
      for (const wake of sleeping) wake();
    },
    { once: true },
  );
  return (ms) => {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timerDelay(ms));
      sleeping.add(wake);
    });
  };
}
