// The fields of the manifest's schema that defaults give and a video may set, with the chunk they
// hold, in their plain and template variants (schema.ts builds the manifest from them).
import { ASPECT_RATIOS, MODELS, RESOLUTIONS } from "../../service-contract/api-types.js";
import { formatNames } from "../../service-contract/media-format.js";
import {
  array,
  boolean,
  Definitions,
  integer,
  integerOr,
  object,
  oneOfValues,
  type Schema,
  string,
  stringOr,
} from "./schema-builder.js";
import {
  ID_STRING_PATTERN,
  MEDIA_STRING_PATTERN,
  NON_BLANK_PATTERN,
  orPlaceholder,
  SEED_MAX,
  TAKES_MAX,
} from "./schema-patterns.js";

/**
 * The fields that defaults give and a video may set, with the chunk they hold. `template`: their
 * variant for a template video as written, where a placeholder may stand for any value (its
 * definitions named template-...).
 */
export function fieldSchemas(defs: Definitions, template: boolean) {
  const name = (def: string): string => (template ? `template-${def}` : def);
  const may = <T>(schema: Schema<T>): Schema<T> => (template ? orPlaceholder(schema) : schema);

  // An id on the service: an integer, or the same written as a string of digits (past 2^53).
  const serviceId = (title: string, description: string, examples: [number, ...(number | string)[]]) =>
    may(
      integerOr(
        { title, description, examples },
        integer(
          { title, description: "A positive integer.", examples: [examples[0]] },
          { minimum: 1, maximum: SEED_MAX },
        ),
        string(
          {
            title,
            description: "A positive int64 written as a string of digits.",
            examples: [String(examples[0])],
          },
          { pattern: ID_STRING_PATTERN },
        ),
      ),
    );

  const assetId = defs.define(
    name("asset-id"),
    serviceId(
      "Asset id",
      "The id of an asset already uploaded to the service: an integer, or a string of digits.",
      [123, "1800000000000000001"],
    ),
  );

  const voiceId = serviceId(
    "Voice id",
    "The id of the voice that speaks the text: an integer, or a string of digits.",
    [17],
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
