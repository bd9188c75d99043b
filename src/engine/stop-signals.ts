// How an engine stops. `stop` ends all work: the user's interrupt, a rejected key ("stop" mode), a
// state file or disk that refuses writes. Submissions already on the wire get a grace period after
// it (`costed`), so that an answer on its way is still recorded.
import { setMaxListeners } from "node:events";
import { ReelError } from "../errors/reel-error.js";
import type { ProgressSink } from "./progress.js";
import { makeStoppableSleep } from "./stoppable-sleep.js";
import { agree, plural } from "../plural.js";

/**
 * How long a submission already on the wire may finish after Ctrl-C, so its answer is recorded: one
 * cut off is `uncertain`, a task perhaps paid for whose id is lost. Most answers take milliseconds;
 * a slow service gets this long (said on screen), and a second Ctrl-C still quits at once.
 */
const SUBMIT_GRACE_MS = 15_000;

/**
 * After a stop of reel's own (a refused key), how long the submissions still on the wire have before
 * the wait for them is said: they are mostly refused in the same instant, and a note about waiting
 * for answers already in would only confuse.
 */
const OWN_STOP_NOTE_MS = 1_000;

export interface StopSignals {
  /** Aborted to end all work. */
  readonly stop: AbortController;
  /** What costed calls listen on: aborted SUBMIT_GRACE_MS after `stop`. */
  readonly costed: AbortSignal;
  /** Sleeps that end early, without an error, once `stop` is aborted. */
  readonly sleep: (ms: number) => Promise<void>;
  /** Submissions sent and not answered yet. */
  onWire: number;
  /** Stops listening to the user's signal. */
  dispose(): void;
}

/** `userSignal`: aborted on Ctrl-C / SIGTERM. */
export function makeStopSignals(userSignal: AbortSignal | undefined, progress: ProgressSink): StopSignals {
  const stop = new AbortController();
  // Every in-flight request listens on `stop`: many listeners are expected.
  setMaxListeners(0, stop.signal);
  let byUser = false;
  const onUserAbort = (): void => {
    byUser = true;
    stop.abort(userSignal?.reason);
  };
  if (userSignal?.aborted) onUserAbort();
  userSignal?.addEventListener("abort", onUserAbort, { once: true });
  const submitAbort = new AbortController();
  setMaxListeners(0, submitAbort.signal);
  const signals: StopSignals = {
    stop,
    costed: submitAbort.signal,
    sleep: makeStoppableSleep(stop.signal),
    onWire: 0,
    dispose: () => userSignal?.removeEventListener("abort", onUserAbort),
  };
  stop.signal.addEventListener(
    "abort",
    () => {
      const sayWait = (): void => {
        if (signals.onWire === 0 || submitAbort.signal.aborted) return;
        progress.event({
          stage: "note",
          detail: `waiting up to ${SUBMIT_GRACE_MS / 1000} s for the answer to ${plural(signals.onWire, "submission")} already sent, so that what was paid is recorded; Ctrl-C again quits at once (${agree(signals.onWire, "it is", "they are")} then marked uncertain)`,
        });
      };
      // The user who pressed Ctrl-C is told at once why reel does not quit yet.
      if (byUser) sayWait();
      else setTimeout(sayWait, OWN_STOP_NOTE_MS).unref();
      // A fresh reason, never the fatal ServiceError that stopped us: a submission cut off here may
      // have reached the service, so it must be recorded as uncertain, not as a definite refusal.
      setTimeout(
        () =>
          submitAbort.abort(new ReelError("E_INTERRUPTED", "stopped while the submission was on the wire")),
        SUBMIT_GRACE_MS,
      ).unref();
    },
    { once: true },
  );
  return signals;
}
