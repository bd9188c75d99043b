// A transfer that must keep moving. undici's bodyTimeout measures one silence at a time: a server
// sending a byte every 20 s never trips it, and held a download (and its slot) for as long as it
// liked. The watchdog asks instead for a minimum amount in every window, which a drip cannot meet.
import { formatDuration } from "../duration.js";

export interface StallRule {
  /** @defaultValue 30_000 */
  readonly windowMs: number;
  /** Bytes that must arrive in each window (64 KiB in 30 s: about 2 KiB/s). @defaultValue 65_536 */
  readonly minBytes: number;
}

export const DEFAULT_STALL_RULE: StallRule = { windowMs: 30_000, minBytes: 64 * 1024 };

export interface StallWatchdog {
  /** Counts bytes received. */
  add(bytes: number): void;
  stop(): void;
}

/** Starts watching: `onStall(why)` is called once, in the first window that gets too little. */
export function watchForStall(rule: StallRule, onStall: (why: string) => void): StallWatchdog {
  let received = 0;
  const timer = setInterval(() => {
    if (received >= rule.minBytes) {
      received = 0;
      return;
    }
    clearInterval(timer);
    onStall(
      `received ${received} bytes in ${formatDuration(rule.windowMs)}, under the ${rule.minBytes}-byte minimum (a stalled or deliberately slow transfer)`,
    );
  }, rule.windowMs);
  timer.unref();
  return {
    add(bytes) {
      received += bytes;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
