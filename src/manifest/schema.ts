// The manifest's JSON Schema (draft 2020-12), built from MODEL_RULES, and the "as written" types
// inferred from it. schemas/manifest.schema.json is this object written out by `npm run gen:schema`;
// a test fails when the committed file differs, so editors and `reel validate` always agree.
import { ASPECT_RATIOS, MODELS, type Model, RESOLUTIONS } from "../service-contract/api-types.js";
import { MODEL_RULES } from "../service-contract/model-rules.js";
import { formatNames } from "../service-contract/media-format.js";
import {
  array,
  boolean,
  clearable,
  conditional,
  Definitions,
  type Doc,
  type Infer,
  integer,
  integerOr,
  type JsonSchema,
  literal,
  object,
  oneOfValues,
  refine,
  type Schema,
  written,
  string,
  stringOr,
} from "./schema-builder.js";

export const SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** Names and ids become file and folder names under OUT: letters, digits, '.', '_', '-', no leading '.'. */
export const SAFE_NAME_PATTERN = "^[A-Za-z0-9_-][A-Za-z0-9._-]*$";
export const SAFE_NAME_MAX = 100;
/** A string with a URL scheme (two letters or more, so `C:` stays a path) must be https (in any case, as URL schemes are). */
export const MEDIA_STRING_PATTERN = "^(?:[Hh][Tt][Tt][Pp][Ss]://|(?![A-Za-z][A-Za-z0-9+.-]+:))";
/** Asset and voice ids: int64 written as an integer or a string of digits (the loader checks the range). */
export const ID_STRING_PATTERN = "^(?!0+$)[0-9]+$";
/** Text sent as a condition: the service refuses empty or blank text. */
export const NON_BLANK_PATTERN = "\\S";
export const SEED_MAX = Number.MAX_SAFE_INTEGER;
/** The most takes of one video. */
export const TAKES_MAX = 100;

// Templates (matrix.ts): a video with `matrix:` or `rows:` holds placeholders `{name}` that reel fills
// in before it validates the videos it makes. An editor checks the template as written, so its
// variant of the schema lets a placeholder stand for a field's value.
const PLACEHOLDER_NAME = "[A-Za-z_][A-Za-z0-9_]*";
const PLACEHOLDER = `\\{${PLACEHOLDER_NAME}\\}`;
/**
 * A text that holds a placeholder, read as matrix.ts reads one: `{{` and `}}` write a brace, so
 * `{{d}}` holds none; a `{` that starts no placeholder is text.
 */
const HOLDS_PLACEHOLDER_PATTERN = `^(?:[^{]|\\{\\{|\\{(?!\\{|${PLACEHOLDER_NAME}\\}))*${PLACEHOLDER}`;
/** A template's id: safe-name characters and placeholders, at least one (each video needs its own id). */
const TEMPLATE_ID_PATTERN = `^(?=[^{]*\\{)(?:[A-Za-z0-9_-]|${PLACEHOLDER})(?:[A-Za-z0-9._-]|${PLACEHOLDER})*$`;
/** A video that is a template, as matrix.ts tells one. */
const IS_TEMPLATE: JsonSchema = {
  type: "object",
  anyOf: [{ required: ["matrix"] }, { required: ["rows"] }],
};
/** A text holding a placeholder: what a template fills in. */
const HOLDS_PLACEHOLDER: JsonSchema = { type: "string", pattern: HOLDS_PLACEHOLDER_PATTERN };

/** Name of the `$defs` entry that holds the rules of one model. Messages recognise rule errors by it. */
export const modelRulesDef = (model: Model): string => `model-${model}`;

/**
 * `schema`, or a text that holds a placeholder: a field of a template video as written. Typed as
 * `schema`, since the "as written" types describe the videos reel validates, which are filled in.
 */
function orPlaceholder<T>(schema: Schema<T>): Schema<T> {
  const { title, description, examples, ...rule } = schema.json as JsonSchema & Doc;
  return written<T>(
    { title, description: `${description} In a template: or a text with a {placeholder}.`, examples },
    unlessPlaceholder(rule),
  );
}

/** `rule`, unless the value is a text that holds a placeholder. */
function unlessPlaceholder(rule: JsonSchema): JsonSchema {
  return conditional(HOLDS_PLACEHOLDER, undefined, rule);
}

/**
 * The fields that defaults give and a video may set, with the chunk they hold. `template`: their
 * variant for a template video as written, where a placeholder may stand for any value (its
 * definitions named template-...).
 */
function fieldSchemas(defs: Definitions, template: boolean) {
  const name = (def: string): string => (template ? `template-${def}` : def);
  const may = <T>(schema: Schema<T>): Schema<T> => (template ? orPlaceholder(schema) : schema);

  const assetId = defs.define(
    name("asset-id"),
    may(
      integerOr(
        {
          title: "Asset id",
          description:
            "The id of an asset already uploaded to the service: an integer, or a string of digits.",
          examples: [123, "1800000000000000001"],
        },
        integer(
          { title: "Asset id", description: "A positive integer.", examples: [123] },
          { minimum: 1, maximum: SEED_MAX },
        ),
        string(
          {
            title: "Asset id",
            description: "A positive int64 written as a string of digits.",
            examples: ["123"],
          },
          { pattern: ID_STRING_PATTERN },
        ),
      ),
    ),
  );

  const voiceId = may(
    integerOr(
      {
        title: "Voice id",
        description: "The id of the voice that speaks the text: an integer, or a string of digits.",
        examples: [17],
      },
      integer(
        { title: "Voice id", description: "A positive integer.", examples: [17] },
        { minimum: 1, maximum: SEED_MAX },
      ),
      string(
        {
          title: "Voice id",
          description: "A positive int64 written as a string of digits.",
          examples: ["17"],
        },
        { pattern: ID_STRING_PATTERN },
      ),
    ),
  );

  const assetObject = object(
    {
      title: "Uploaded asset",
      description: "An asset already on the service, by id; reel uploads nothing for it.",
      examples: [{ asset: 123 }],
    },
    { asset: assetId },
    ["asset"],
  );

  const mediaString = (what: string, examples: string[]) =>
    string(
      {
        title: `${what} path or URL`,
        description: `A local ${what.toLowerCase()} file (relative to the manifest's folder) or an https URL. Files are recognised by their content, not their name.`,
        examples,
      },
      { minLength: 1, pattern: MEDIA_STRING_PATTERN },
    );

  const source = defs.define(
    name("source"),
    stringOr(
      {
        title: "Source image",
        description: `The image the video starts from: a local file (${formatNames("image")}) relative to the manifest, an https URL, or {asset: ID}. Required by the avatar models.`,
        examples: ["./media/face.png", "https://example.com/face.jpg", { asset: 123 }],
      },
      mediaString("Image", ["./media/face.png", "https://example.com/face.jpg"]),
      assetObject,
    ),
  );

  const audio = defs.define(
    name("audio"),
    stringOr(
      {
        title: "Audio",
        description: `The chunk's audio: a local file (${formatNames("audio")}) relative to the manifest, an https URL, or {asset: ID}. Excludes speech.`,
        examples: ["./media/intro.mp3", "https://example.com/intro.wav", { asset: 456 }],
      },
      mediaString("Audio", ["./media/intro.mp3", "https://example.com/intro.wav"]),
      assetObject,
    ),
  );

  const speech = object(
    {
      title: "Speech",
      description:
        "Audio that reel generates from a voice and a text (POST /v1/audios) and uses as the chunk's audio. The same voice and text are generated once. Excludes audio.",
      examples: [{ voice: 17, text: "Welcome to the spring collection." }],
    },
    {
      voice: voiceId,
      text: string(
        { title: "Speech text", description: "The words the voice speaks.", examples: ["Welcome!"] },
        { pattern: NON_BLANK_PATTERN },
      ),
    },
    ["voice", "text"],
  );

  const chunk = defs.define(
    name("chunk"),
    object(
      {
        title: "Chunk",
        description:
          "A stretch of the video: a duration and at least one of text, audio, speech (audio and speech exclude each other).",
        examples: [{ duration: 5, text: "smiles, warm and calm" }],
      },
      {
        duration: may(
          integer(
            {
              title: "Duration",
              description: "Seconds of video for this chunk. actor models: 5 or 10; avatar models: 1 to 60.",
              examples: [5, 10],
            },
            { minimum: 1 },
          ),
        ),
        text: string(
          {
            title: "Text",
            description:
              "The text condition: what happens and how. Required by the actor models; shapes emotion and action for the avatar models.",
            examples: ["smiles, warm and calm"],
          },
          { pattern: NON_BLANK_PATTERN },
        ),
        audio,
        speech,
        enablePromptEnhancement: may(
          boolean({
            title: "Prompt enhancement",
            description: "Lets the service rewrite the text prompt. Left out of the request when not given.",
            examples: [true],
          }),
        ),
      },
      ["duration"],
      {
        anyOf: [{ required: ["text"] }, { required: ["audio"] }, { required: ["speech"] }],
        not: { required: ["audio", "speech"] },
      },
    ),
  );

  const model = may(
    oneOfValues(MODELS, {
      title: "Model",
      description:
        "The generation model. actor-1, actor-2, actor-4: text-driven performance; avatar-h1, avatar-h1-pro: animate a source image to audio. Required here or in defaults.",
      examples: ["actor-2", "avatar-h1"],
    }),
  );
  const resolution = may(
    oneOfValues(RESOLUTIONS, {
      title: "Resolution",
      description:
        "Output resolution. actor-1/actor-2: 720p or 1080p; actor-4: 540p; avatar models: 540p or 720p. Left out of the request when not given.",
      examples: ["720p"],
    }),
  );
  const aspectRatio = may(
    oneOfValues(ASPECT_RATIOS, {
      title: "Aspect ratio",
      description:
        "Width:height. actor models: 16:9 or 9:16; avatar models also 1:1. Quote it in YAML. Left out of the request when not given.",
      examples: ["16:9", "9:16"],
    }),
  );
  const seed = may(
    integer(
      {
        title: "Seed",
        description: "Random seed, for repeatable results. Left out of the request when not given.",
        examples: [7],
      },
      { minimum: 0, maximum: SEED_MAX },
    ),
  );

  const takes = may(
    integer(
      {
        title: "Takes",
        description: `Makes this many jobs of the video, each with its own seed (the seed given, then +1, +2...; without one, a fixed seed per take): <id>~1 .. <id>~N, in OUT/<manifest>/<id>~1.mp4 ... From 1 to ${TAKES_MAX}.`,
        examples: [3],
      },
      { minimum: 1, maximum: TAKES_MAX },
    ),
  );

  const chunks = array(
    chunk,
    {
      title: "Chunks",
      description:
        "The stretches of the video, in order; at least one. In defaults: the chunks of every video that gives none.",
      examples: [[{ duration: 5, text: "waves hello" }]],
    },
    { minItems: 1 },
  );
  return { chunk, model, resolution, aspectRatio, seed, source, takes, chunks };
}

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
    const badResolutions = RESOLUTIONS.filter((x) => !r.resolutions.includes(x));
    if (badResolutions.length > 0) {
      rules.push(
        conditional(
          defaultsHave("resolution", { enum: badResolutions }),
          eachVideo(conditional(whenModel(m), { required: ["resolution"] })),
        ),
      );
    }
    const badRatios = ASPECT_RATIOS.filter((x) => !r.aspectRatios.includes(x));
    if (badRatios.length > 0) {
      rules.push(
        conditional(
          defaultsHave("aspectRatio", { enum: badRatios }),
          eachVideo(conditional(whenModel(m), { required: ["aspectRatio"] })),
        ),
      );
    }
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
