// The manifest's JSON Schema (draft 2020-12), built from MODEL_RULES, and the "as written" types
// inferred from it. schemas/manifest.schema.json is this object written out by `npm run gen:schema`;
// a test fails when the committed file differs, so editors and `reel validate` always agree.
import { ASPECT_RATIOS, MODELS, type Model, RESOLUTIONS } from "../../service-contract/api-types.js";
import { MODEL_RULES } from "../../service-contract/model-rules.js";
import {
  array,
  clearable,
  conditional,
  Definitions,
  type Infer,
  type JsonSchema,
  literal,
  object,
  refine,
  written,
  string,
} from "./schema-builder.js";

import { fieldSchemas } from "./schema-fields.js";
import {
  IS_TEMPLATE,
  modelRulesDef,
  SAFE_NAME_MAX,
  SAFE_NAME_PATTERN,
  SCHEMA_DIALECT,
  TEMPLATE_ID_PATTERN,
  unlessPlaceholder,
} from "./schema-patterns.js";

export {
  ID_STRING_PATTERN,
  MEDIA_STRING_PATTERN,
  modelRulesDef,
  NON_BLANK_PATTERN,
  SAFE_NAME_MAX,
  SAFE_NAME_PATTERN,
  SCHEMA_DIALECT,
  SEED_MAX,
  TAKES_MAX,
} from "./schema-patterns.js";

function buildTypes() {
  const defs = new Definitions();

  const safeName = (doc: { title: string; description: string; examples: string[] }) =>
    string(doc, { minLength: 1, maxLength: SAFE_NAME_MAX, pattern: SAFE_NAME_PATTERN });

  const fields = fieldSchemas(defs, false);
  const { chunk, model, resolution, aspectRatio, seed, source, takes, chunks } = fields;

  // The rules of docs/service-api.md, one definition per model, applied to a video (and to defaults)
  // whose model is that model. Chunk rules only match videos: defaults have no chunks. A value that
  // holds a placeholder is a template's, checked once filled in; in any other video such a value
  // already breaks its field's own rule (an enum, an integer), which words the problem.
  for (const m of MODELS) {
    const rules = MODEL_RULES[m];
    const chunkRules: Record<string, unknown> = {
      properties: {
        duration:
          "oneOf" in rules.durations
            ? unlessPlaceholder({ enum: rules.durations.oneOf })
            : { maximum: rules.durations.max },
      },
    };
    if (rules.text === "required") chunkRules.required = ["text"];
    if (rules.audio === "required") chunkRules.anyOf = [{ required: ["audio"] }, { required: ["speech"] }];
    // null (a video clearing a default) leaves the choice to the service, except for a source the
    // model needs.
    const orNull = (rule: JsonSchema): JsonSchema => conditional({ type: "null" }, undefined, rule);
    defs.defineRaw(modelRulesDef(m), {
      description: `What ${m} accepts (docs/service-api.md). A source image is ${rules.source}.`,
      properties: {
        resolution: orNull(unlessPlaceholder({ enum: rules.resolutions })),
        aspectRatio: orNull(unlessPlaceholder({ enum: rules.aspectRatios })),
        ...(rules.source === "required" ? { source: { not: { type: "null" } } } : {}),
        chunks: { items: chunkRules },
      },
    });
  }
  const whenModel = (m: Model): JsonSchema => ({ required: ["model"], properties: { model: { const: m } } });
  const perModel: JsonSchema[] = MODELS.map((m) =>
    conditional(whenModel(m), { $ref: `#/$defs/${modelRulesDef(m)}` }),
  );

  // What defaults give and a video may set: a video's null clears a default (e.g. `source: null`).
  const fieldsOfVideo = (f: typeof fields) => ({
    model: f.model,
    resolution: clearable(f.resolution),
    aspectRatio: clearable(f.aspectRatio),
    seed: clearable(f.seed),
    source: clearable(f.source),
    takes: clearable(f.takes),
    chunks: f.chunks,
  });
  const defaultFields = { model, resolution, aspectRatio, seed, source, takes, chunks };

  const scalar = { type: ["string", "number", "boolean"] };
  const matrix = written<Record<string, unknown>>(
    {
      title: "Matrix",
      description:
        "Named lists whose cross product makes one video each: {name} in the id (which names every axis), texts, voices, paths and assets takes each value. An item may be a mapping, whose every key is a placeholder (the key named like the axis gives its value). exclude: combinations left out.",
      examples: [
        {
          lang: ["en", "de"],
          face: [
            { face: "anna", voice: 17 },
            { face: "ben", voice: 18 },
          ],
        },
      ],
    },
    {
      type: "object",
      properties: {
        exclude: {
          title: "Excluded combinations",
          description: "Combinations the matrix leaves out: each a mapping of axes to values.",
          examples: [[{ lang: "de", face: "ben" }]],
          type: "array",
          items: { type: "object", additionalProperties: scalar },
        },
      },
      additionalProperties: {
        type: "array",
        minItems: 1,
        items: { anyOf: [scalar, { type: "object", additionalProperties: scalar }] },
      },
    },
  );

  const rows = written<unknown>(
    {
      title: "Rows",
      description:
        "A CSV file (relative to the manifest) whose every row makes one video (times the matrix, if any): each column is a placeholder {column}; the id names the column(s) whose values are unique. A cell that is a field's whole value takes that field's type (a voice a whole number); texts stay texts.",
      examples: ["./leads.csv", { file: "./leads.csv", delimiter: ";" }],
    },
    {
      anyOf: [
        { type: "string", minLength: 1, description: "The CSV file, relative to the manifest." },
        {
          type: "object",
          description: "The CSV file and its field separator.",
          properties: {
            file: {
              title: "Rows file",
              description: "The CSV file, relative to the manifest.",
              examples: ["./leads.csv"],
              type: "string",
              minLength: 1,
            },
            delimiter: {
              title: "Delimiter",
              examples: [";", "\t"],
              type: "string",
              minLength: 1,
              maxLength: 1,
              // As the loader reads it (load.ts): a quote or a line break would end a field's text.
              pattern: '^[^"\\r\\n]$',
              description:
                "The field separator: one character, not a quote or a line break; by default the one of , ; and tab the header line uses most.",
            },
          },
          required: ["file"],
          additionalProperties: false,
        },
      ],
    },
  );

  const video = defs.define(
    "video",
    refine(
      object(
        {
          title: "Video",
          description: "One video to generate: a job, identified by the manifest's name and this id.",
          examples: [{ id: "intro", model: "actor-2", chunks: [{ duration: 5, text: "waves hello" }] }],
        },
        {
          id: safeName({
            title: "Video id",
            description:
              "Unique in the manifest; names the output file OUT/<manifest>/<id>.mp4. Letters, digits, '.', '_', '-', not starting with '.'.",
            examples: ["intro", "scene-2"],
          }),
          ...fieldsOfVideo(fields),
          matrix,
          rows,
        },
        ["id"],
      ),
      { allOf: perModel },
    ),
  );

  // A template as an editor sees it, before reel makes its videos (which it validates as `video`):
  // a placeholder may stand for any value, and the id names the placeholders that tell its videos apart.
  const templateVideo = defs.define(
    "template-video",
    refine(
      object(
        {
          title: "Video template",
          description:
            "A video with matrix or rows: one video per combination or row, each {placeholder} filled in with its value.",
          examples: [
            {
              id: "promo-{lang}",
              matrix: { lang: ["en", "de"] },
              model: "actor-2",
              chunks: [{ duration: 5, text: "waves hello in {lang}" }],
            },
          ],
        },
        {
          id: string(
            {
              title: "Video id",
              description:
                "Names the videos the template makes, unique in the manifest: every matrix axis and a column of the rows whose values are unique, as {placeholders}, among letters, digits, '.', '_', '-'.",
              examples: ["promo-{lang}-{face}", "welcome-{lead_id}"],
            },
            { minLength: 1, pattern: TEMPLATE_ID_PATTERN },
          ),
          ...fieldsOfVideo(fieldSchemas(defs, true)),
          matrix,
          rows,
        },
        ["id"],
      ),
      { allOf: perModel },
    ),
  );
  const videoOrTemplate = written<Infer<typeof video>>(
    {
      title: "Video",
      description:
        "One video to generate (a job, identified by the manifest's name and its id), or a template of videos (with matrix or rows).",
      examples: [{ id: "intro", model: "actor-2", chunks: [{ duration: 5, text: "waves hello" }] }],
    },
    conditional(IS_TEMPLATE, { $ref: templateVideo.json.$ref }, { $ref: video.json.$ref }),
  );

  const defaults = refine(
    object(
      {
        title: "Defaults",
        description: "Values every video of this manifest takes unless it sets its own.",
        examples: [{ model: "actor-2", resolution: "720p", aspectRatio: "16:9" }],
      },
      defaultFields,
      [],
    ),
    { allOf: perModel },
  );

  const manifest = object(
    {
      title: "reel manifest",
      description:
        "A batch of videos for reel, format version 1: defaults and a list of videos, each a list of chunks.",
      examples: [
        { version: 1, videos: [{ id: "intro", model: "actor-2", chunks: [{ duration: 5, text: "hi" }] }] },
      ],
    },
    {
      version: literal(1, {
        title: "Format version",
        description: "The manifest format version: 1.",
        examples: [1],
      }),
      name: safeName({
        title: "Manifest name",
        description:
          "Names the output folder OUT/<name>/ and, with each video id, each job. Unique across a run. Default: the file name without extension.",
        examples: ["spring-campaign"],
      }),
      defaults,
      videos: array(
        videoOrTemplate,
        {
          title: "Videos",
          description: "The videos of this manifest; at least one.",
          examples: [[{ id: "intro", model: "actor-2", chunks: [{ duration: 5, text: "hi" }] }]],
        },
        { minItems: 1 },
      ),
    },
    ["version", "videos"],
  );

  return { manifest, defaults, video, chunk, defs: defs.defs, whenModel };
}

const types = buildTypes();

/** A manifest as written in YAML (after schema validation). */
export type ManifestInput = Infer<typeof types.manifest>;
export type DefaultsInput = NonNullable<ManifestInput["defaults"]>;
export type VideoInput = Infer<typeof types.video>;
export type ChunkInput = Infer<typeof types.chunk>;

/**
 * Rules that involve both a video and the manifest's defaults, which a schema can only state at
 * the top level: a video takes its model, resolution, aspect ratio and source from defaults when
 * it has none of its own.
 */
function crossRules(whenModel: (m: Model) => JsonSchema): JsonSchema[] {
  const defaultsHave = (field: string, value?: JsonSchema): JsonSchema => ({
    required: ["defaults"],
    properties: { defaults: { required: [field], ...(value ? { properties: { [field]: value } } : {}) } },
  });
  const eachVideo = (schema: JsonSchema): JsonSchema => ({ properties: { videos: { items: schema } } });
  const noModel: JsonSchema = { not: { required: ["model"] } };

  const rules: JsonSchema[] = [
    // Every video needs a model and chunks, its own or the default.
    conditional(defaultsHave("model"), undefined, eachVideo({ required: ["model"] })),
    conditional(defaultsHave("chunks"), undefined, eachVideo({ required: ["chunks"] })),
  ];
  for (const m of MODELS) {
    const r = MODEL_RULES[m];
    const rulesOfM = { $ref: `#/$defs/${modelRulesDef(m)}` };
    // Videos without a model of their own follow the rules of the default model.
    rules.push(conditional(defaultsHave("model", { const: m }), eachVideo(conditional(noModel, rulesOfM))));
    // A default resolution or aspect ratio that model m does not take: a video of model m must set its own.
    const setsOwn = (field: "resolution" | "aspectRatio", notTaken: readonly string[]) => {
      if (notTaken.length === 0) return;
      rules.push(
        conditional(
          defaultsHave(field, { enum: notTaken }),
          eachVideo(conditional(whenModel(m), { required: [field] })),
        ),
      );
    };
    setsOwn(
      "resolution",
      RESOLUTIONS.filter((x) => !r.resolutions.includes(x)),
    );
    setsOwn(
      "aspectRatio",
      ASPECT_RATIOS.filter((x) => !r.aspectRatios.includes(x)),
    );
    if (r.source === "required") {
      rules.push(
        conditional(
          { not: defaultsHave("source") },
          eachVideo(conditional(whenModel(m), { required: ["source"] })),
        ),
        conditional(
          { ...defaultsHave("model", { const: m }), not: defaultsHave("source") },
          eachVideo(conditional(noModel, { required: ["source"] })),
        ),
      );
    }
  }
  return rules;
}

/** The whole published schema. Key order is fixed, so the written file is stable. */
export function buildManifestSchema(): JsonSchema {
  return {
    $schema: SCHEMA_DIALECT,
    ...types.manifest.json,
    allOf: crossRules(types.whenModel),
    $defs: types.defs,
  };
}

/** The schema file's exact text, as committed in schemas/manifest.schema.json. */
export function manifestSchemaText(): string {
  return `${JSON.stringify(buildManifestSchema(), null, 2)}\n`;
}

function propertyNames(json: JsonSchema): readonly string[] {
  return Object.keys((json.properties ?? {}) as Record<string, unknown>);
}

/** The fields each kind of mapping takes, for "did you mean" and for listing them. */
export const KNOWN_FIELDS = {
  manifest: propertyNames(types.manifest.json),
  defaults: propertyNames(types.defaults.json),
  video: propertyNames(types.defs.video ?? {}),
  chunk: propertyNames(types.defs.chunk ?? {}),
  speech: ["voice", "text"],
  asset: ["asset"],
} as const satisfies Record<string, readonly string[]>;
