// The words of each notification: a `text` a person reads in a chat (Slack's and Mattermost's incoming
// webhooks show it as the message), beside the structured event(s) a program reads.
import { DEFAULTS } from "../defaults.js";
import { plural } from "../plural.js";
import type { StreamEvent } from "../events/types.js";

/** What a process made, failed and left uncertain, as its stream told it. */
export interface NotifyCounts {
  readonly done: number;
  readonly failed: number;
  readonly uncertain: number;
}

/** One message's body (before it is scrubbed and serialized). */
export interface Notification {
  readonly text: string;
  /** What it tells: the event type it stands for, or `jobs.failed` for a batch of failures. */
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Slack reads &, < and > as markup; Mattermost shows the entities as the characters. */
function plain(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** "reel run on build-7": the command and the host of the runner. */
function who(command: string, runner: string): string {
  const host = runner.slice(0, runner.lastIndexOf(":")) || runner;
  return `reel ${command}${host ? ` on ${host}` : ""}`;
}

const OUTCOMES: Readonly<Record<string, string>> = {
  completed: "completed",
  incomplete: "ended with tasks still running (past --poll-deadline: a rerun follows them)",
  capped: "stopped at the budget's cap (a run with a higher cap goes on)",
  fatal: "stopped: the service or the output folder cannot go on (see below)",
  interrupted: "interrupted",
  stopped: "stopped",
  error: "ended with an error",
};

export function runEndedNotification(
  command: string,
  runner: string,
  ended: { readonly outcome: string; readonly exitCode?: number; readonly reason?: string },
  counts: NotifyCounts,
  event: StreamEvent | undefined,
): Notification {
  const said = OUTCOMES[ended.outcome] ?? ended.outcome;
  const tally = `${plural(counts.done, "video")} made, ${counts.failed} failed, ${counts.uncertain} uncertain`;
  const exit = ended.exitCode !== undefined ? ` (exit ${ended.exitCode})` : "";
  const reason = ended.reason ? ` ${ended.reason}.` : "";
  return {
    text: plain(`${who(command, runner)} ${said}${exit}: ${tally}.${reason}`),
    type: "run.ended",
    outcome: ended.outcome,
    ...(ended.exitCode !== undefined && { exitCode: ended.exitCode }),
    counts,
    ...(event ? { event } : { reason: ended.reason ?? null }),
  };
}

/** A notification of one event of the stream, or undefined for one no person is called for. */
export function eventNotification(command: string, event: StreamEvent): Notification | undefined {
  const by = who(command, event.runner);
  const text = ((): string | undefined => {
    switch (event.type) {
      case "manifest.finished":
        return `${by}: ${event.manifest} finished: ${event.results}.`;
      case "service.stopped":
        return `${by} stopped: ${event.reason}. A person is needed (a new key, credits, the service's address).`;
      case "service.paused":
        return `${by} paused: ${event.reason}. It goes on by itself once that is fixed.`;
      case "budget.threshold":
        return `${by}: budget at ${event.percent}%: ${event.reason}.`;
      case "budget.reached":
        return `${by}: budget at 100%, nothing more is submitted: ${event.reason}.`;
      default:
        return undefined;
    }
  })();
  return text === undefined ? undefined : { text: plain(text), type: event.type, event };
}

/** The failures gathered since the last such message: their count, and the first few reasons. */
export function failuresNotification(
  command: string,
  runner: string,
  count: number,
  first: readonly StreamEvent[],
): Notification {
  const shown = first
    .slice(0, DEFAULTS.notify.reasonsShown)
    .map(
      (e) => `${e.job}${e.type === "job.uncertain" ? " (uncertain)" : ""}: ${e.reason ?? "no reason given"}`,
    );
  const more = count > shown.length ? `; and ${count - shown.length} more` : "";
  return {
    text: plain(
      `${who(command, runner)}: ${plural(count, "job")} failed or uncertain: ${shown.join("; ")}${more}.`,
    ),
    type: "jobs.failed",
    count,
    events: first.slice(0, DEFAULTS.notify.reasonsShown),
  };
}
