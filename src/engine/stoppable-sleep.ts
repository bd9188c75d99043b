// The engine's sleeps (between polls, after a refusal, while paused): each ends early, without an
// error, once work stops. node:timers/promises' setTimeout with a signal does the same but costs
// about three times as much per sleep (an abort listener added and removed on a signal that every
// sleeping poll shares), and a run sleeps at least once per video.

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
      const timer = setTimeout(wake, ms);
      sleeping.add(wake);
    });
  };
}
