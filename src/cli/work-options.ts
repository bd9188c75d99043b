// The options of `run` and `watch` that shape the work, and their usage text: one list for both.
import { DEFAULTS } from "../defaults.js";
import type { OptionsConfig } from "./command.js";
import { MAX_VIDEOS_OPTION, maxVideosUsage } from "./max-videos.js";
import { METRICS_OPTIONS, METRICS_USAGE } from "./metrics-options.js";
import { NOTIFY_OPTIONS, NOTIFY_USAGE } from "./notify-options.js";
import { PRIVATE_SOURCES_OPTION, SERVICE_OPTIONS, SERVICE_USAGE } from "./service-options.js";

/** The options of `run` and `watch` that shape the work (read here, for both). */
export const WORK_OPTIONS: OptionsConfig = {
  ...SERVICE_OPTIONS,
  "retry-failed": { type: "boolean" },
  "max-attempts": { type: "string" },
  "resubmit-uncertain": { type: "boolean" },
  "poll-deadline": { type: "string" },
  "allow-read": { type: "string", multiple: true },
  ...MAX_VIDEOS_OPTION,
  "new-service": { type: "boolean" },
  ...PRIVATE_SOURCES_OPTION,
  "rebuild-state": { type: "boolean" },
  "time-scale": { type: "string" },
  jitter: { type: "string" },
  "no-color": { type: "boolean" },
  ...METRICS_OPTIONS,
  events: { type: "string" },
  ...NOTIFY_OPTIONS,
};

export const WORK_USAGE = `  --retry-failed         resubmit jobs that ended Fail or Canceled (a new, counted attempt)
  --max-attempts N       attempts per job in all, for --retry-failed (default ${DEFAULTS.maxAttempts})
  --resubmit-uncertain   resubmit jobs whose submission outcome is unknown (may pay twice)
  --poll-deadline TIME   stop following a task after TIME (e.g. 30m, 6h, 2d; default ${DEFAULTS.pollDeadline.text}); its task
                         id is kept and the next run follows it again
  --allow-read DIR       let manifests read files under DIR too (repeatable)
${maxVideosUsage(25)}
  --new-service          make again on this service the jobs already sent to another base URL
                         (paid again), and work beside runners of the store on another base URL;
                         without it, reel refuses both, as the address may be another name of the
                         same service
  --allow-private-sources
                         fetch https sources from loopback, link-local and private addresses
                         too (refused by default: a manifest must not reach into your network)
  --rebuild-state        rebuild a lost (missing, emptied, rolled back) state file from the job
                         records and the journal of submissions in the output folder: recorded
                         jobs are done, followed by task id, or uncertain, never submitted again.
                         Without it, a state file found empty beside such records or earlier logs,
                         or not knowing submissions the journal shows, is refused (exit 2)
  --time-scale X         with --sandbox: seconds a task runs per second of video (default 0.02;
                         1 runs a task as long as its video: time to watch the live display)
  --jitter J             with --sandbox: run times vary by a factor in [1-J, 1+J], as a real
                         service's do (0 to 0.9; default 0)
  --no-color             no colours in the live display (as the environment variable NO_COLOR)
  --events FILE          append the event stream to FILE as JSON lines, once the state committed them
                         (schemas/events.schema.json; reel events reads the same from the state)
${NOTIFY_USAGE}
${METRICS_USAGE}

${SERVICE_USAGE}`;
