// What a runner of a fleet (a shared store) tells of the fleet's events: the work of silent runners
// taken over, and the store going away and coming back (state/pg/outage.ts).
import { formatDuration } from "../duration.js";
import type { Logger } from "../log/logger.js";
import type { OutageEvent, TakeOver } from "../state/job-store.js";
import type { FleetTelling } from "./coordination.js";
import { agree, plural } from "../plural.js";

/** What the runners of a fleet note of a takeover (at start, and as they work). */
export function noteTakeOver(found: TakeOver, progress: FleetTelling): void {
  for (const runner of found.lost) {
    progress.event({
      stage: "note",
      detail: `runner ${runner.id} on ${runner.host} (pid ${runner.pid}) ${runner.why === "gone" ? "ended without stopping (no process under its pid on this machine)" : "was silent past its lease"}: its work is taken over`,
    });
  }
  if (found.uncertain > 0) {
    progress.event({
      stage: "note",
      detail: `${plural(found.uncertain, "submission")} of a runner that stopped ${agree(found.uncertain, "has", "have")} an unknown outcome: marked uncertain`,
    });
  }
  if (found.uploads > 0) {
    progress.event({
      stage: "note",
      detail: `${plural(found.uploads, "upload")} of a runner that stopped may have reached the service without an answer; ${agree(found.uploads, "it is", "they are")} uploaded again if needed (uploads cost no credits)`,
    });
  }
}

/** The line that says the store stopped answering, or answers again. */
export function outageNote(event: OutageEvent): string {
  return event.state === "down"
    ? `the store does not answer (${event.error}): no new work is taken; reel tries again until it does, for up to ${formatDuration(event.limitMs)}, then stops`
    : `the store answers again after ${formatDuration(event.downMs)}: work goes on`;
}

/**
 * The store stopped answering (every operation waits and tries again, so no new work is taken) or
 * answers again. Said as a note (a line off a terminal) and as a pause of the live display.
 */
export function noteOutage(event: OutageEvent, progress: FleetTelling, log: Logger): void {
  if (event.state === "down") {
    log.warn({ err: event.error }, "store unreachable: waiting for it");
    progress.event({ stage: "paused", detail: "the store does not answer: no new work is taken" });
  } else {
    log.info({ downMs: Math.round(event.downMs) }, "store reachable again");
    progress.event({ stage: "resumed" });
  }
  progress.event({ stage: "note", detail: outageNote(event) });
}
