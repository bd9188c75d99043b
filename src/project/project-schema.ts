// The project file's settings, in one table: the reader checks values against it, and the JSON
// Schema editors use (schemas/project.schema.json, written by `npm run gen:schema`) is made from it.

import { DEFAULTS } from "../defaults.js";
import {
  DEFAULT_NAME,
  DEFAULT_SHEET,
  DEFAULT_STATUS,
  FIXED_PLACEHOLDERS,
  SHEET_CHOICES,
  STATUS_CHOICES,
} from "../export-rules.js";

export { PROJECT_FILE_NAME } from "../manifest/index.js";

export interface ProjectField {
  readonly name: string;
  readonly type: "version" | "path" | "count" | "url" | "urls" | "store" | "name" | "export";
  /** What the value must be, as an error message says it ("state takes ..."). */
  readonly expects: string;
  readonly description: string;
}

export const PROJECT_FIELDS: readonly ProjectField[] = [
  { name: "version", type: "version", expects: "1", description: "The project file's format version: 1." },
  {
    name: "state",
    type: "path",
    expects: "a file path, relative to this file",
    description:
      "The state file (default .reel/state.db beside this file). Overridden by --state and REEL_STATE.",
  },
  {
    name: "out",
    type: "path",
    expects: "a folder path, relative to this file",
    description: "The output folder (default out beside this file). Overridden by --out and REEL_OUT.",
  },
  {
    name: "concurrency",
    type: "count",
    expects: "a whole number from 1 up",
    description:
      "Generations unfinished at once (default 4). Overridden by --concurrency and REEL_CONCURRENCY.",
  },
  {
    name: "maxVideos",
    type: "count",
    expects: "a whole number from 1 up",
    description: `The most videos a manifest, and a run's manifests together, may make (default ${DEFAULTS.maxVideos}): matrices times takes, counted before they are expanded. Overridden by --max-videos and REEL_MAX_VIDEOS.`,
  },
  {
    name: "baseUrl",
    type: "url",
    expects: "the service's address (https://...)",
    description:
      "The service's address. Overridden by --base-url and REEL_BASE_URL. Never the API key: that comes from REEL_API_KEY.",
  },
  {
    name: "store",
    type: "store",
    expects: "a postgres:// URL without its password (PGPASSWORD or ~/.pgpass give it) or other secrets",
    description:
      "A shared store on PostgreSQL for every runner of the project (postgres://user@host/db). Never the password (user:password@ or password=) nor another secret (passfile=, sslpassword=, sslkey=): it would be committed; PGPASSWORD or ~/.pgpass give the password. Overridden by --store and REEL_STORE.",
  },
  {
    name: "budget",
    type: "name",
    expects: "a budget's name (letters, digits, '.', '_', '-')",
    description:
      "The named budget every run and watch of the project spends from (reel budget set NAME --max-seconds N, or --max-credits N --prices FILE): one cap shared by every runner naming it. Overridden by --budget.",
  },
  {
    name: "notify",
    type: "urls",
    expects: "an http:// or https:// URL, or a list of them",
    description:
      "Where run and watch post notifications (a run ended, a manifest finished, a stop, the budget at 80% and 100%, failures): JSON with a `text` for Slack's or Mattermost's incoming webhooks. Added to --notify and REEL_NOTIFY. A loopback, link-local or private address is refused without --allow-private-notify. A webhook whose URL is its secret belongs in REEL_NOTIFY, not in a committed file.",
  },
  {
    name: "export",
    type: "export",
    expects: "a mapping of name, sheet and status",
    description: "What reel export delivers, when its flags do not say: the names, the sheet, the videos.",
  },
];

/** The settings of `export:`; each a choice of values, or the name template. */
export interface ExportField {
  readonly name: "name" | "sheet" | "status";
  /** The values it takes; none for the template. */
  readonly choices?: readonly string[];
  readonly description: string;
}

export const EXPORT_FIELDS: readonly ExportField[] = [
  {
    name: "name",
    description: `Each video's name in the export folder (default ${DEFAULT_NAME}), relative to it: ${FIXED_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")} and the job's variables; {{ and }} write a brace. Checked before anything is copied. Overridden by --name.`,
  },
  {
    name: "sheet",
    choices: SHEET_CHOICES,
    description: `The delivery sheet written: delivery.csv, delivery.jsonl or both (default ${DEFAULT_SHEET}). Overridden by --sheet.`,
  },
  {
    name: "status",
    choices: STATUS_CHOICES,
    description: `The videos delivered: the approved takes, or every finished video (default ${DEFAULT_STATUS}). Overridden by --status.`,
  },
];

/** A budget's name: letters, digits, '.', '_' and '-', at most 64. */
export const BUDGET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const JSON_TYPES: Record<ProjectField["type"], object> = {
  export: {
    type: "object",
    additionalProperties: false,
    properties: Object.fromEntries(
      EXPORT_FIELDS.map((f) => [
        f.name,
        f.choices
          ? { enum: f.choices, description: f.description }
          : { type: "string", minLength: 1, description: f.description },
      ]),
    ),
  },
  version: { const: 1 },
  path: { type: "string", minLength: 1 },
  count: { type: "integer", minimum: 1 },
  url: { type: "string", pattern: "^https?://" },
  urls: {
    oneOf: [
      { type: "string", pattern: "^https?://" },
      { type: "array", minItems: 1, items: { type: "string", pattern: "^https?://" } },
    ],
  },
  store: { type: "string", pattern: "^postgres(ql)?://" },
  name: { type: "string", pattern: BUDGET_NAME_PATTERN.source },
};

/** schemas/project.schema.json, as text. */
export function projectSchemaText(): string {
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "reel project file (reel.yaml)",
    type: "object",
    additionalProperties: false,
    required: ["version"],
    properties: Object.fromEntries(
      PROJECT_FIELDS.map((f) => [f.name, { ...JSON_TYPES[f.type], description: f.description }]),
    ),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
