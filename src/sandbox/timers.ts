// Every timer of the emulator goes through here so that close() can clear them all: a test that
// closes its sandbox must not leave a lifecycle step or an injected delay pending.

export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private closed = false;
  private readonly onError: (error: unknown) => void;

  /** `onError` receives what a callback throws: a bug in one task must not take the process down. */
  constructor(onError: (error: unknown) => void) {
    this.onError = onError;
  }

  /** Runs `fn` after `ms`, unless the sandbox closes first. */
  schedule(ms: number, fn: () => void): void {
    if (this.closed) return;
    const handle = setTimeout(() => {
      this.pending.delete(handle);
      try {
        fn();
      } catch (error) {
        this.onError(error);
      }
    }, ms);
    this.pending.add(handle);
  }

  /** Resolves after `ms`; never resolves once the sandbox has closed (its socket is gone by then). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.schedule(ms, resolve));
  }

  clearAll(): void {
    this.closed = true;
    for (const handle of this.pending) clearTimeout(handle);
    this.pending.clear();
  }
}
