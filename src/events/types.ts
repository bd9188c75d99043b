// The event stream: one JSON object per line, for tools that follow what reel does without reading
// its human output. This module is the one list of the stream's types, what each carries, and its
// version; schemas/events.schema.json is generated from it (events-schema.ts), docs/events.md says
// where each comes from.

/**
 * The stream's version (`v`). A field or a type added keeps it; a field removed, renamed or given
 * another meaning raises it (see docs/events.md).
 */
export const EVENTS_VERSION = 1;

/** Extra fields an event may carry, beside the common ones. */
export type EventField =
  | "command"
  | "outcome"
  | "exitCode"
  | "manifest"
  | "jobs"
  | "taskId"
  | "status"
  | "file"
  | "reason"
  | "attempt"
  | "decision"
  | "reviewer"
  | "take"
  | "voice"
  | "count"
  | "code"
  | "results"
  | "percent"
  | "budget";

interface TypeSpec {
  readonly description: string;
  /** Whether the event is a job's (carries `job`). */
  readonly job: boolean;
  /** Fields the event always carries. */
  readonly required?: readonly EventField[];
}

/** Every type of the stream, in the order a job meets them. */
export const EVENT_TYPES = {
  "run.started": { description: "A run or watch started (`command`).", job: false, required: ["command"] },
  "run.ended": {
    description:
      "A run or watch ended: `outcome` is completed, incomplete, capped, fatal, interrupted, stopped or error; `exitCode` the process's.",
    job: false,
    required: ["command", "outcome"],
  },
  "manifest.seen": {
    description: "A manifest's jobs were taken (`jobs`: how many; 0 for a watched manifest removed).",
    job: false,
    required: ["manifest", "jobs"],
  },
  "manifest.finished": {
    description:
      'A watch: every job of the manifest is final (`results`: its counts, as "12 Success, 1 Fail"); said again when they change.',
    job: false,
    required: ["manifest", "results"],
  },
  "job.queued": { description: "The job waits for a generation slot.", job: true },
  "job.uploading": {
    description:
      "A file of the job is being uploaded (`file`); a file shared by jobs is uploaded once, for the first.",
    job: true,
  },
  "job.speaking": {
    description:
      "Speech for the job is being made (`voice`); speech shared by jobs is made once, for the first.",
    job: true,
  },
  "job.submitting": {
    description: "The job's submission is recorded as an intent (its request leaves next).",
    job: true,
  },
  "job.submitted": {
    description: "The service answered with the job's task id: exactly one per task id reel learned.",
    job: true,
    required: ["taskId"],
  },
  "job.status": {
    description: "A status the service reported for the job's task.",
    job: true,
    required: ["status"],
  },
  "job.downloaded": { description: "The job's video was written (`file`).", job: true, required: ["file"] },
  "job.failed": { description: "The job ended Fail (`reason`).", job: true, required: ["reason"] },
  "job.uncertain": {
    description:
      "Whether the service received the job's submission is unknown (`reason`); it is not sent again unasked.",
    job: true,
  },
  "job.refused": {
    description:
      "The service refused the submission for now (nothing made, nothing paid); the job is unsent again.",
    job: true,
  },
  "job.withdrawn": {
    description: "An intent taken back before its request left; the job is unsent again.",
    job: true,
  },
  "job.reset": {
    description:
      "A failed or uncertain job made unsent again (--retry-failed, --resubmit-uncertain), `reason` why.",
    job: true,
  },
  "job.decided": {
    description: "A reviewer's decision on the job's take (`decision`: approved, rejected, cleared).",
    job: true,
    required: ["decision"],
  },
  "job.retake-queued": {
    description: "One more take of the job was asked for (`take`: the new take's job).",
    job: true,
  },
  "job.forgotten": {
    description: "An unsent job was dropped (gone from its manifest, a retake withdrawn).",
    job: true,
  },
  "job.restored": {
    description: "The job was written back from the output folder's records (--rebuild-state).",
    job: true,
  },
  "uploads.interrupted": {
    description: "Uploads cut off by a crash were found at the start (`count`): they are made again.",
    job: false,
  },
  "service.paused": {
    description:
      "A watch holds every call to the service (`reason`: rejected key, no credits, the store unreachable); work resumes by itself.",
    job: false,
    required: ["reason"],
  },
  "service.stopped": {
    description: "The service stopped the run (`reason`, `code`: rejected key, no credits, unreachable).",
    job: false,
    required: ["reason"],
  },
  "budget.reached": {
    description:
      "The budget (--max-seconds, --max-credits, a named budget: `budget`) stopped new submissions (`reason`).",
    job: false,
    required: ["reason"],
  },
  "budget.threshold": {
    description:
      "What the budget counts (spent, and held for requests on their way) passed `percent` (80, 100) of a cap; `reason` says which and how much. Once per threshold and session of a process; of a named budget (`budget`), once in the budget's life, by the runner whose spend passed it (100: or that the budget first refused), until `reel budget set` raises it.",
    job: false,
    required: ["percent", "reason"],
  },
} as const satisfies Record<string, TypeSpec>;

export type EventType = keyof typeof EVENT_TYPES;

/** One line of the stream. */
export interface StreamEvent {
  readonly v: number;
  /** Increasing per runner (the store's event number: also increasing across the runners of one store). */
  readonly seq: number;
  /** ISO 8601, UTC. */
  readonly time: string;
  readonly type: EventType;
  /** The process that recorded it ("host:pid"), or "" where an earlier reel recorded none. */
  readonly runner: string;
  /** manifest/id, as in results.jsonl: on a job's events. */
  readonly job?: string;
  /** The task's id (digits), from the job's submission on. */
  readonly taskId?: string;
  readonly command?: string;
  readonly outcome?: string;
  readonly exitCode?: number;
  readonly manifest?: string;
  readonly jobs?: number;
  readonly status?: string;
  readonly file?: string;
  readonly reason?: string;
  readonly attempt?: number;
  readonly decision?: string;
  readonly reviewer?: string;
  readonly take?: string;
  readonly voice?: string;
  readonly count?: number;
  readonly code?: string;
  readonly results?: string;
  readonly percent?: number;
  /** The named budget (`reel budget set`) a budget event is of. */
  readonly budget?: string;
}

/** An event to record that is no state change of the store's own: its type, job and fields. */
export interface NoteEvent {
  readonly type: EventType;
  readonly job?: string;
  readonly fields?: Readonly<Partial<Record<EventField, string | number>>>;
}

export function isEventType(value: string): value is EventType {
  return Object.prototype.hasOwnProperty.call(EVENT_TYPES, value);
}
