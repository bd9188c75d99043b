// Whether the service may be called now, and what a fatal condition does. A rejected key or
// exhausted credits either stop the engine ("stop": a one-shot run exits 3) or pause every call to
// the service, checked again with backoff, until the condition clears ("pause": watch). Refusals
// "for now" (429, 503, a refused connection) past the client's retries are waited out here too, and
// a wait longer than a run sits through parks the submissions not sent yet.
import { BACKOFF, backoffDelay } from "../backoff.js";
import { classify, type ServiceClient } from "../client/index.js";
import type { ServiceError } from "../errors/service.js";
import { DEFAULTS } from "../defaults.js";
import { formatDuration } from "../duration.js";
import type { OutputDiskError } from "../errors/output.js";
import type { Logger } from "../log/logger.js";
import type { ProgressSink } from "./progress.js";

/** The longest the service may ask reel to wait within a run; see DEFAULTS.longestWaitMs for why. */
export const LONGEST_WAIT_MS = DEFAULTS.longestWaitMs;

export interface ServiceGateOptions {
  readonly client: ServiceClient;
  readonly log: Logger;
  readonly progress: ProgressSink;
  readonly onFatal: "stop" | "pause";
  /** Aborted to end all work. */
  readonly stop: AbortController;
  readonly sleep: (ms: number) => Promise<void>;
}

export class ServiceGate {
  /** The condition that stopped the engine ("stop" mode; a full disk in both modes), if any. */
  fatal: ServiceError | OutputDiskError | undefined;
  /** Refusals "for now" of submissions in this run (see submit.ts). */
  transientRefusals = 0;
  private pause: { promise: Promise<void>; resume: () => void } | undefined;
  /** Until when new submissions are parked: the service asked to wait longer than LONGEST_WAIT_MS. */
  private submissionsParkedUntil = 0;
  /** Checks of a paused service made since it paused (BACKOFF.pauseProbe spaces them). */
  private probes = 0;
  private readonly announced = new Set<string>();
  private waitingNoted = 0;

  constructor(private readonly o: ServiceGateOptions) {}

  /** Whether the service is paused (watch mode): calls wait in whenServiceUsable. */
  get paused(): boolean {
    return this.pause !== undefined;
  }

  /** Whether new submissions are parked for this run (see parkSubmissions). */
  get parked(): boolean {
    return Date.now() < this.submissionsParkedUntil;
  }

  /** True when `error` is fatal; in "pause" mode the caller then awaits `whenServiceUsable` and retries. */
  handleFatal(thrown: unknown): boolean {
    const { log, progress, stop, onFatal, client } = this.o;
    // A run whose service never answered and cannot even be connected to (`reach`) is told at
    // once, rather than waiting on it with backoff for an hour. A fatal condition behind an
    // uncertain outcome is the submission's to judge (submit.ts).
    const c = classify(thrown, { reach: onFatal === "stop" ? client : undefined });
    if (c.verdict !== "fatal" || c.mayHaveTakenEffect) return false;
    const error = c.error as ServiceError;
    if (onFatal === "stop") {
      if (!this.fatal) {
        this.fatal = error;
        log.error({ code: error.code, endpoint: error.endpoint }, error.message);
        progress.event({ stage: "stopped", detail: error.message });
        if (error.code === "E_CREDITS") {
          // Nothing more is paid for, but what was paid for is collected: following a task and
          // fetching its video cost no credits. Ctrl-C leaves them to the next run.
          progress.event({
            stage: "note",
            detail:
              "no credits left: nothing more is submitted; tasks already submitted are followed and their videos downloaded (Ctrl-C leaves them to the next run)",
          });
        } else {
          stop.abort(error);
        }
      }
      return true;
    }
    if (!this.pause) {
      let resume: () => void = () => {};
      const promise = new Promise<void>((resolve) => {
        resume = resolve;
      });
      this.pause = { promise, resume };
      progress.event({ stage: "paused", detail: pauseReason(error) });
      // Said once per condition, not once per job, and again only after it cleared.
      if (!this.announced.has(error.code)) {
        this.announced.add(error.code);
        progress.event({
          stage: "note",
          // The client's message ends with what a one-shot run needs ("..., then rerun"): a watcher
          // needs no rerun.
          detail: `paused: ${error.message.replace(/,? then rerun\b[^.]*\./, ".")} Checking again with backoff; work resumes by itself.`,
        });
      }
      void this.probe(error);
    }
    return true;
  }

  private async probe(error: ServiceError): Promise<void> {
    const { stop, sleep, client, progress } = this.o;
    while (!stop.signal.aborted) {
      const delay = backoffDelay(BACKOFF.pauseProbe, this.probes++);
      progress.event({ stage: "paused", detail: pauseReason(error), ms: delay });
      await sleep(delay);
      if (stop.signal.aborted) return;
      if (error.code === "E_CREDITS") break; // only a submission can tell: let one try again
      try {
        // Any answer but 401 (a 404 for this made-up id included) means the key is accepted.
        await client.getAsset("1", { signal: stop.signal });
        break;
      } catch (e) {
        if (classify(e).verdict !== "fatal") break;
      }
    }
    const current = this.pause;
    this.pause = undefined;
    progress.event({ stage: "resumed" });
    current?.resume();
  }

  /** Waits while the service is paused; false when the engine stopped meanwhile. */
  async whenServiceUsable(): Promise<boolean> {
    const { stop } = this.o;
    while (this.pause && !stop.signal.aborted) {
      await Promise.race([
        this.pause.promise,
        new Promise((r) => stop.signal.addEventListener("abort", r, { once: true })),
      ]);
    }
    return !stop.signal.aborted;
  }

  /** A call went through: a pause that was said is said to be over. */
  serviceWorks(): void {
    this.probes = 0;
    if (this.announced.size > 0) {
      this.o.progress.event({ stage: "note", detail: "the service accepts calls again: resumed" });
      this.announced.clear();
    }
  }

  /** The service asked to wait `ms` before the next submission, longer than a run waits: parked. */
  parkSubmissions(ms: number): void {
    const { log, progress, onFatal } = this.o;
    const first = Date.now() >= this.submissionsParkedUntil;
    this.submissionsParkedUntil = Date.now() + ms;
    progress.event({
      stage: "waiting",
      ms,
      detail: "submissions parked: the service asked for a longer wait (Retry-After) than a run sits through",
    });
    log.warn(
      { waitMs: ms },
      "the service asked for a wait longer than a run sits through: submissions parked",
    );
    if (!first) return;
    progress.event({
      stage: "note",
      detail: `the service asked to wait ${formatDuration(ms)} before the next submission (Retry-After), longer than reel waits in a run (${formatDuration(LONGEST_WAIT_MS)}): the jobs not sent yet stay unsent (nothing is paid for them); rerun reel later${onFatal === "pause" ? ", or save their manifest again once the wait is over" : ""}`,
    });
  }

  /** Says, at most once a minute, that submissions wait on the service: else a long wait looks like a hang. */
  noteWaiting(ms: number): void {
    const { log, progress } = this.o;
    log.warn({ waitMs: ms }, "the service refused submissions for now; waiting");
    progress.event({ stage: "waiting", ms, detail: "the service refuses new submissions for now" });
    if (Date.now() - this.waitingNoted < 60_000) return;
    this.waitingNoted = Date.now();
    progress.event({
      stage: "note",
      detail: `the service refuses new submissions for now (busy, rate limited, or not reachable): waiting ${formatDuration(ms)} before trying again`,
    });
  }
}

/** Why a watcher is paused, in a few words for the live display (the note says it in full). */
function pauseReason(error: ServiceError): string {
  if (error.code === "E_CREDITS") return "no credits left on the service";
  if (error.code === "E_AUTH") return "the service rejects the API key";
  return error.message;
}
