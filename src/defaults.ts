// Every default of reel that more than one part reads (the engine, the CLI's flags and --help, the
// client, the watcher), in one place. A usage text interpolates from here, so --help cannot say one
// number while the code uses another. Defaults read by one module alone stay beside their use.
import { BACKOFF } from "./backoff.js";
import { parseDuration } from "./duration.js";

/** A duration as --help writes it (and a user would type it), with its milliseconds. */
export interface WrittenDuration {
  readonly text: string;
  readonly ms: number;
}

function written(text: string): WrittenDuration {
  const ms = parseDuration(text);
  if (ms === undefined) throw new TypeError(`not a duration: ${text}`);
  return { text, ms };
}

export const DEFAULTS = {
  /** The state file, under the current folder (--state, REEL_STATE). @defaultValue ".reel/state.db" */
  statePath: ".reel/state.db",
  /** The output folder, under the current folder (--out, REEL_OUT). @defaultValue "out" */
  outDir: "out",
  /**
   * Generations unfinished (submitted, not final) at once, across every manifest (--concurrency,
   * REEL_CONCURRENCY): the service runs a few tasks per account at once; more would only wait there.
   * @defaultValue 4
   */
  concurrency: 4,
  /**
   * The most videos one manifest, and one run's manifests together, may make: matrices times takes,
   * counted before anything is expanded (--max-videos, REEL_MAX_VIDEOS, reel.yaml's maxVideos). A
   * campaign of 100,000 passes; a few kilobytes of YAML standing for millions of videos is refused
   * at once rather than expanded for minutes and gigabytes. @defaultValue 200_000
   */
  maxVideos: 200_000,
  /**
   * How long the store keeps its events (the stream `reel events` reads; docs/events.md): older ones
   * are deleted when a run or watch starts, and every eventsPruneEveryMs while one runs.
   * @defaultValue 30 days
   */
  eventsKeepMs: 30 * 24 * 3_600_000,
  /** @defaultValue 6 hours */
  eventsPruneEveryMs: 6 * 3_600_000,
  /**
   * The logs beside the state file (`logs/`; docs/operations.md). A run's or watch's log is cut
   * into parts of partBytes (REEL_LOG_PART_BYTES): the one being written and partsKept earlier ones,
   * so one reel's log stays under 4 x 64 MiB = 256 MiB however long it runs. When a run or watch
   * starts, the logs of reels no longer running are deleted past keepMs old, past the newest
   * keptFiles, or past keptBytes in all (the newest kept first); a log written in the last
   * inUseMs is never deleted, whoever wrote it. The folder thus holds at most 1 GiB, plus 256 MiB
   * per reel running.
   */
  logs: {
    partBytes: 64 * 2 ** 20,
    partsKept: 3,
    keepMs: 30 * 24 * 3_600_000,
    keptFiles: 100,
    keptBytes: 2 ** 30,
    inUseMs: 3_600_000,
  },
  /**
   * Notifications (--notify, docs/operations.md): failures are told at most once per this, each
   * message tried this many times (BACKOFF.notifyRetry between), each try given up after
   * notifyTimeoutMs; at most notifyQueued messages wait per target (the oldest dropped past it), and
   * at exit reel waits at most notifyExitWaitMs for those still on their way.
   */
  notify: {
    failuresEveryMs: 60_000,
    attempts: 5,
    timeoutMs: 10_000,
    queued: 100,
    exitWaitMs: 1_000,
    /** Failures named in a message (the count says them all). */
    reasonsShown: 3,
  },
  /** Uploads at once. @defaultValue 4 */
  uploadConcurrency: 4,
  /** Downloads at once. @defaultValue 4 */
  downloadConcurrency: 4,
  /** Attempts per job in all, for --retry-failed (--max-attempts). @defaultValue 3 */
  maxAttempts: 3,
  /**
   * Stop following a task after this long (--poll-deadline); its id is kept, a rerun goes on.
   * @defaultValue 24h
   */
  pollDeadline: written("24h"),
  /**
   * How eagerly tasks are polled. `timing`: never one task more often than minMs, never left longer
   * than maxMs (poll-schedule.ts); `perSecond`: polls of all tasks together. The engine's own
   * default, for a service the CLI did not say more of.
   */
  polling: { timing: { minMs: 100, maxMs: 10_000 }, perSecond: 20 },
  /**
   * A service on this machine (the sandbox) runs tasks in compressed time and costs nothing to ask:
   * polled tightly while its run times are learned (see engine/poll-schedule.ts), never left
   * unasked longer than a real service's default.
   */
  localPolling: { timing: { minMs: 20, maxMs: 30_000 }, perSecond: 500 },
  /**
   * A remote service takes minutes per task: each task polled at most once a second, 10 polls a
   * second in all.
   */
  remotePolling: { timing: { minMs: 1_000, maxMs: 30_000 }, perSecond: 10 },
  /**
   * The longest the service may ask reel to wait (Retry-After) within a run. A longer wait is not
   * sat through: the work it holds is parked (left as it is, said on screen, taken up by the next
   * run), since a run that sleeps for hours looks hung and a service asking for days is broken.
   * @defaultValue 15 min
   */
  longestWaitMs: 15 * 60_000,
  /**
   * watch: how long a file must stay unchanged before it is read (--settle): long enough for
   * scripts and copies that write in bursts, short enough that a saved manifest starts within a
   * second. @defaultValue 700ms
   */
  settle: written("700ms"),
  /** watch: how long a file that does not end with a line break may still be being written. @defaultValue 3s */
  incompleteGrace: written("3s"),
  /** The client's timeouts of one call (see Timeouts in client/client.ts). */
  timeouts: {
    /** TCP (and TLS) connect. @defaultValue 10_000 */
    connectMs: 10_000,
    /** From sending the request to the response headers. @defaultValue 60_000 */
    headersMs: 60_000,
    /** Longest silence while reading a response body. @defaultValue 60_000 */
    bodyMs: 60_000,
    /** One whole exchange, from sending to the answer's last byte. @defaultValue 120_000 */
    callMs: 120_000,
  },
  /** The client's retries of one call (see RetryOptions in client/retry-policy.ts). */
  retry: {
    /** Tries in all, the first included. @defaultValue 6 */
    maxAttempts: 6,
    /** Give up once this much time has passed since the first try. @defaultValue 120_000 */
    maxElapsedMs: 120_000,
    /** @defaultValue BACKOFF.clientRetry.baseMs (250) */
    baseDelayMs: BACKOFF.clientRetry.baseMs,
    /** @defaultValue BACKOFF.clientRetry.maxMs (20_000) */
    maxDelayMs: BACKOFF.clientRetry.maxMs,
    /** A longer Retry-After goes up to the caller instead of being slept through. @defaultValue 60_000 */
    maxRetryAfterMs: 60_000,
  },
  /** Keep-alive connections per origin of the client's dispatcher. @defaultValue 16 */
  connections: 16,
  /**
   * How long an idle connection is kept: shorter than common server idle timeouts, so reel rarely
   * writes to a socket the server is closing (on a costed POST that race would make the outcome
   * unknown). @defaultValue 4_000
   */
  keepAliveMs: 4_000,
} as const;
