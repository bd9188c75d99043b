// Validator errors -> messages in the user's terms. The schema decides what is wrong; this module
// only words it, using the manifest itself for context (which model a video ends up with, what
// the default was), e.g. "actor-2 takes resolution 720p or 1080p, not 540p".
import type { ErrorObject } from "ajv/dist/2020.js";
import { didYouMean } from "../../edit-distance.js";
import { ASPECT_RATIOS, MODELS, type Model, RESOLUTIONS } from "../../service-contract/api-types.js";
import { describeDurations, MODEL_RULES } from "../../service-contract/model-rules.js";
import { type LocateTarget, type PathSegment, parsePointer } from "../parse/locate.js";
import { PROBLEM_CODES, type ProblemCode } from "../problem.js";
import { KNOWN_FIELDS, SAFE_NAME_MAX, SEED_MAX } from "./schema.js";
import { isRecord } from "../../values.js";

/** A schema problem before it has a position: where it is (a path into the document) and what. */
export interface SchemaIssue {
  path: PathSegment[];
  target: LocateTarget;
  message: string;
  code: ProblemCode;
  /** For a missing field: its name. For an unknown field: the known field it is probably a typo of. */
  field?: string;
}

export function orList(items: readonly (string | number)[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/** Longest value quoted whole in a message; a longer one (a pasted file) is cut, saying how long it is. */
const SHOWN_CHARS = 60;

/** How a value appears in a message. */
export function show(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (typeof value === "string") {
    if (value.length <= SHOWN_CHARS) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, SHOWN_CHARS))}... (${value.length} characters)`;
  }
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}

function child(value: unknown, segment: PathSegment): unknown {
  if (Array.isArray(value)) return value[Number(segment)];
  if (isRecord(value)) return value[String(segment)];
  return undefined;
}

export function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let value = root;
  for (const segment of path) value = child(value, segment);
  return value;
}

function asModel(value: unknown): Model | undefined {
  return typeof value === "string" && (MODELS as readonly string[]).includes(value)
    ? (value as Model)
    : undefined;
}

type Place = "manifest" | "defaults" | "video" | "chunk" | "speech" | "asset" | "other";

/** What kind of mapping the path points at. */
function placeOf(path: readonly PathSegment[]): Place {
  const p = path.map(String);
  const n = p.length;
  if (n === 0) return "manifest";
  if (n === 1 && p[0] === "defaults") return "defaults";
  if (p[0] === "videos" && n === 2) return "video";
  if (p[0] === "videos" && n === 4 && p[2] === "chunks") return "chunk";
  if (p[n - 1] === "speech") return "speech";
  if (p[n - 1] === "source" || p[n - 1] === "audio") return "asset";
  return "other";
}

const PLACE_NAME: Record<Place, string> = {
  manifest: "the manifest",
  defaults: "defaults",
  video: "a video",
  chunk: "a chunk",
  speech: "speech",
  asset: "an asset reference",
  other: "this mapping",
};

function knownFields(place: Place): readonly string[] {
  return place === "other" ? [] : KNOWN_FIELDS[place];
}

/** The model that applies at `path`: the video's own, else the default; for defaults, the default. */
function modelAt(root: unknown, path: readonly PathSegment[]): Model | undefined {
  const defaultModel = asModel(valueAt(root, ["defaults", "model"]));
  if (path[0] === "videos" && path.length >= 2) {
    return asModel(valueAt(root, ["videos", path[1]!, "model"])) ?? defaultModel;
  }
  return defaultModel;
}

const ASSET_FORMS = "a local path, an https URL or {asset: ID}";

/** Words for what a field must be, used by type errors. */
function expected(field: string): string {
  switch (field) {
    case "source":
      return `a source image: ${ASSET_FORMS}`;
    case "audio":
      return `an audio file: ${ASSET_FORMS}`;
    case "asset":
    case "voice":
      return "an id: a positive whole number";
    case "duration":
      return "a whole number of seconds";
    case "seed":
      return "a whole number";
    case "videos":
      return "a list of videos";
    case "chunks":
      return "a list of chunks";
    case "defaults":
      return `a mapping of ${KNOWN_FIELDS.defaults.join(", ")}`;
    case "speech":
      return "a mapping {voice: ID, text: TEXT}";
    case "enablePromptEnhancement":
      return "true or false";
    case "text":
    case "id":
    case "name":
    case "model":
    case "resolution":
    case "aspectRatio":
      return "a string (put it in quotes)";
    default:
      return "a valid value";
  }
}

const NAME_RULE = `letters, digits, '.', '_', '-', not starting with '.', at most ${SAFE_NAME_MAX} characters`;

/**
 * The message for one validator error, or undefined for errors that only summarise others
 * (`if`, and the branches of an `anyOf`, whose own error is worded instead).
 */
export function describeSchemaError(error: ErrorObject, root: unknown): SchemaIssue | undefined {
  if (error.keyword === "if") return undefined;
  if (error.schemaPath.includes("/anyOf/")) return undefined;

  const path: PathSegment[] = parsePointer(error.instancePath);
  const field = path.length > 0 ? String(path[path.length - 1]) : "";
  const place = placeOf(path);
  const value = valueAt(root, path);
  const params = error.params as Record<string, unknown>;
  const issue = (
    message: string,
    code: ProblemCode,
    at: PathSegment[] = path,
    target: LocateTarget = "value",
    about?: string,
  ): SchemaIssue => ({ path: at, target, message, code, ...(about !== undefined ? { field: about } : {}) });

  switch (error.keyword) {
    case "additionalProperties": {
      const name = String(params.additionalProperty);
      const fields = knownFields(place);
      const near = didYouMean(name, fields);
      const verb = place === "defaults" ? "take" : "takes";
      const belongsInChunk =
        (place === "video" || place === "defaults") &&
        (KNOWN_FIELDS.chunk as readonly string[]).includes(name);
      const hint =
        name === "<<"
          ? "; YAML merge keys are not supported, use defaults"
          : belongsInChunk
            ? `; ${name} belongs in each chunk`
            : near
              ? `; did you mean "${near}"?`
              : fields.length > 0
                ? `; ${PLACE_NAME[place]} ${verb} ${fields.join(", ")}`
                : "";
      return issue(
        `unknown field "${name}" in ${PLACE_NAME[place]}${hint}`,
        PROBLEM_CODES.unknownField,
        [...path, name],
        "key",
        near,
      );
    }

    case "required": {
      const missing = String(params.missingProperty);
      const model = modelAt(root, path);
      if (place === "video" && missing === "model") {
        return issue(
          `this video has no model: set model here or in defaults (${orList(MODELS)})`,
          PROBLEM_CODES.missingField,
        );
      }
      if (place === "video" && (missing === "resolution" || missing === "aspectRatio") && model) {
        const allowed =
          missing === "resolution" ? MODEL_RULES[model].resolutions : MODEL_RULES[model].aspectRatios;
        const inherited = valueAt(root, ["defaults", missing]);
        // Nothing inherited (defaults empty or not a mapping, reported on its own): no rule broken.
        if (inherited === undefined) return undefined;
        const words = missing === "resolution" ? "resolution" : "aspect ratio";
        return issue(
          `${model} takes ${words} ${orList(allowed)}, not ${String(inherited)} (from defaults); set ${missing} on this video`,
          PROBLEM_CODES.modelRule,
          [...path, "model"],
        );
      }
      if (place === "video" && missing === "source" && model) {
        return issue(
          `${model} needs a source image: set source (${ASSET_FORMS}) on this video or in defaults`,
          PROBLEM_CODES.modelRule,
        );
      }
      if (place === "chunk" && missing === "text" && model) {
        return issue(`${model} needs a text in every chunk`, PROBLEM_CODES.modelRule);
      }
      const what: Record<string, string> = {
        version: "version: 1",
        videos: "videos: a list of at least one video",
        id: "id: every video needs one",
        chunks: "chunks: a list of at least one chunk (here or in defaults)",
        duration: "duration: seconds of video",
        voice: "voice: the id of the voice that speaks",
        text: "text: the words to speak",
        asset: "asset: the id of an uploaded asset",
      };
      return issue(`missing ${what[missing] ?? missing}`, PROBLEM_CODES.missingField, path, "value", missing);
    }

    case "anyOf": {
      // Two anyOf apply to a chunk: "text, audio or speech" (structure) and "audio or speech"
      // (the avatar models). Which one is broken shows in the chunk itself.
      const chunk = isRecord(value) ? value : {};
      const hasAny = "text" in chunk || "audio" in chunk || "speech" in chunk;
      const model = modelAt(root, path);
      if (!hasAny) return issue("a chunk needs text, audio or speech", PROBLEM_CODES.missingField);
      if (model) return issue(`${model} needs an audio or speech in every chunk`, PROBLEM_CODES.modelRule);
      return issue("a chunk needs an audio or speech", PROBLEM_CODES.modelRule);
    }

    case "not":
      if (field === "source" && value === null) {
        const model = modelAt(root, path);
        return issue(
          `${model ?? "this model"} needs a source image: source: null clears the default; give this video its own (${ASSET_FORMS})`,
          PROBLEM_CODES.modelRule,
        );
      }
      // A chunk that is not a mapping (reported as such) has neither audio nor speech.
      if (!isRecord(value) || !("audio" in value && "speech" in value)) return undefined;
      return issue(
        "a chunk takes audio or speech, not both (speech is made into the chunk's audio)",
        PROBLEM_CODES.invalidValue,
        [...path, "speech"],
        "key",
      );

    case "enum": {
      const model = modelAt(root, path);
      if (field === "model") {
        const near = typeof value === "string" ? didYouMean(value, MODELS) : undefined;
        return issue(
          `unknown model ${show(value)}${near ? `; did you mean "${near}"?` : ""} (models: ${orList(MODELS)})`,
          PROBLEM_CODES.invalidValue,
        );
      }
      if (field === "resolution" || field === "aspectRatio") {
        const all: readonly string[] = field === "resolution" ? RESOLUTIONS : ASPECT_RATIOS;
        const words = field === "resolution" ? "resolution" : "aspect ratio";
        if (typeof value !== "string" || !all.includes(value) || !model) {
          const hint = field === "aspectRatio" && typeof value === "number" ? ' (quote it: "16:9")' : "";
          return issue(
            `${field} must be ${orList(all)}, not ${show(value)}${hint}`,
            PROBLEM_CODES.invalidValue,
          );
        }
        const rules = MODEL_RULES[model];
        const allowed = field === "resolution" ? rules.resolutions : rules.aspectRatios;
        return issue(`${model} takes ${words} ${orList(allowed)}, not ${value}`, PROBLEM_CODES.modelRule);
      }
      if (field === "duration" && model) {
        return issue(
          `${model} takes chunks of ${describeDurations(MODEL_RULES[model])}, not ${show(value)}`,
          PROBLEM_CODES.modelRule,
        );
      }
      return issue(
        `${field} must be ${orList((params.allowedValues as unknown[]).map(show))}, not ${show(value)}`,
        PROBLEM_CODES.invalidValue,
      );
    }

    case "const":
      return issue(
        `${field} must be ${show(params.allowedValue)}, not ${show(value)}`,
        PROBLEM_CODES.invalidValue,
      );

    case "maximum":
    case "minimum": {
      const model = modelAt(root, path);
      if (field === "duration" && error.keyword === "maximum" && model) {
        return issue(
          `${model} takes chunks of ${describeDurations(MODEL_RULES[model])}, not ${show(value)}`,
          PROBLEM_CODES.modelRule,
        );
      }
      if (field === "duration")
        return issue(`duration must be at least 1 second, not ${show(value)}`, PROBLEM_CODES.invalidValue);
      if (field === "seed")
        return issue(
          `seed must be a whole number from 0 to ${SEED_MAX}, not ${show(value)}`,
          PROBLEM_CODES.invalidValue,
        );
      return issue(`${field} must be a positive id, not ${show(value)}`, PROBLEM_CODES.invalidValue);
    }

    case "type": {
      if (path.length === 0) {
        return issue(
          value === null || value === undefined
            ? "the manifest is empty: it needs version: 1 and videos"
            : `a manifest must be a mapping with version and videos, not ${show(value)}`,
          PROBLEM_CODES.invalidValue,
        );
      }
      if (/^\d+$/.test(field)) {
        const what = path[path.length - 2] === "videos" ? "a video" : "a chunk";
        const shape = what === "a video" ? "id, model, chunks" : "duration and text, audio or speech";
        return issue(
          `${what} must be a mapping with ${shape}, not ${show(value)}`,
          PROBLEM_CODES.invalidValue,
        );
      }
      return issue(`${field} must be ${expected(field)}, not ${show(value)}`, PROBLEM_CODES.invalidValue);
    }

    case "pattern": {
      if (value === "" && (field === "id" || field === "name")) return undefined; // minLength words it
      if (field === "id" || field === "name") {
        return issue(
          `${field} ${show(value)} is not safe as a file name: use ${NAME_RULE}`,
          PROBLEM_CODES.unsafeName,
        );
      }
      if (field === "source" || field === "audio") {
        return issue(
          `${field} must be a local path or an https URL; ${show(value)} is not https`,
          PROBLEM_CODES.badUrl,
        );
      }
      if (field === "text") return issue("text must not be blank", PROBLEM_CODES.invalidValue);
      return issue(
        `${field} must be a positive id (digits only), not ${show(value)}`,
        PROBLEM_CODES.invalidValue,
      );
    }

    case "minLength":
      return issue(
        `${field} must not be empty`,
        field === "id" || field === "name" ? PROBLEM_CODES.unsafeName : PROBLEM_CODES.invalidValue,
      );

    case "maxLength":
      return issue(`${field} is longer than ${SAFE_NAME_MAX} characters`, PROBLEM_CODES.unsafeName);

    case "minItems":
      return issue(
        field === "videos" ? "videos must list at least one video" : "chunks must list at least one chunk",
        PROBLEM_CODES.invalidValue,
      );

    default:
      return issue(`${field || "the manifest"} ${error.message ?? "is invalid"}`, PROBLEM_CODES.invalidValue);
  }
}
