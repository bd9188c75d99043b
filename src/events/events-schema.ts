// schemas/events.schema.json, made from the list of types (types.ts): one line of the stream, with
// the common fields, and per type the fields it always carries. `npm run gen:schema` writes it; a
// test compares the committed file with what this makes now.
import { EVENTS_VERSION, EVENT_TYPES, type EventType } from "./types.js";

const FIELDS = {
  v: { const: EVENTS_VERSION, description: "The schema's version (see docs/events.md)." },
  seq: {
    type: "integer",
    minimum: 1,
    description:
      "The event's number in the store: increasing per runner (and across the runners of one store).",
  },
  time: { type: "string", format: "date-time", description: "When it was recorded (ISO 8601, UTC)." },
  type: { enum: Object.keys(EVENT_TYPES), description: "What happened (see the list of types)." },
  runner: {
    type: "string",
    description: "The process that recorded it, as host:pid; empty on events of earlier reels.",
  },
  job: { type: "string", description: "The job (manifest/id, as in results.jsonl): on a job's events." },
  taskId: {
    type: "string",
    pattern: "^[0-9]+$",
    description: "The job's task id, from its submission on (an int64, as a string).",
  },
  command: { enum: ["run", "watch"] },
  outcome: { type: "string" },
  exitCode: { type: "integer" },
  manifest: { type: "string" },
  jobs: { type: "integer", minimum: 0 },
  status: {
    type: "string",
    description: "A status the service reported (PreProcessing, Processing, Success, Fail, Canceled).",
  },
  file: { type: "string" },
  reason: { type: "string" },
  attempt: { type: "integer" },
  decision: { enum: ["approved", "rejected", "cleared"] },
  reviewer: { type: "string" },
  take: { type: "string" },
  voice: { type: "string" },
  count: { type: "integer", minimum: 0 },
  code: { type: "string" },
  results: { type: "string" },
  percent: { type: "integer", minimum: 0 },
  budget: { type: "string", description: "The named budget (reel budget set) a budget event is of." },
};

export function eventsSchema(): Record<string, unknown> {
  const types = Object.entries(EVENT_TYPES) as [EventType, (typeof EVENT_TYPES)[EventType]][];
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "reel event stream: one line (run/watch --events FILE, reel events)",
    description: `Version ${EVENTS_VERSION}. One JSON object per line. Fields may be added within a version; consumers ignore fields they do not know.`,
    type: "object",
    required: ["v", "seq", "time", "type", "runner"],
    properties: FIELDS,
    additionalProperties: false,
    allOf: types.map(([type, spec]) => {
      const required: string[] = [...(spec.job ? ["job"] : []), ...("required" in spec ? spec.required : [])];
      return {
        if: { properties: { type: { const: type } }, required: ["type"] },
        then: {
          description: spec.description,
          // Named in `properties` too, as validators in strict mode ask of a `required`.
          properties: {
            ...Object.fromEntries(required.map((name) => [name, true])),
            ...(spec.job ? {} : { job: false }),
          },
          ...(required.length > 0 ? { required } : {}),
        },
      };
    }),
  };
}

export function eventsSchemaText(): string {
  return `${JSON.stringify(eventsSchema(), null, 2)}\n`;
}
