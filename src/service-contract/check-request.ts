// The checks a generation request (docs/service-api.md) must pass, as data. The sandbox turns
// them into its FastAPI-style 422 and the manifest validator tests itself against them, so what
// reel refuses locally and what the emulated service refuses are the same list. Pure: no I/O.
//
// Unknown fields are ignored, as FastAPI does by default: the spec documents examples with extra
// fields (a top-level `enablePromptEnhancement`), so refusing them would refuse the spec's own
// examples.
import { isLosslessNumber } from "lossless-json";
import { ASPECT_RATIOS, type Id, MODELS, type Model, RESOLUTIONS } from "./api-types.js";
import {
  describeDurations,
  isDurationAllowed,
  MODEL_RULES,
  type ModelRules,
  SANDBOX_DEFAULTS,
} from "./model-rules.js";
import { INT64_MAX } from "../values.js";

/**
 * One problem of a request. `loc` is the path inside the request body (the sandbox prefixes
 * `"body"`, as FastAPI does); `type` follows pydantic's names where one fits (`missing`,
 * `literal_error`, `int_type` ...) and is `model_rule` for a rule of docs/service-api.md
 */
export interface Violation {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * The text of a JSON number, whichever way the body was parsed: `JSON.parse` gives numbers,
 * lossless-json gives `LosslessNumber`s (whose text keeps int64 ids exact).
 */
function numberText(value: unknown): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === "bigint") return value.toString();
  if (isLosslessNumber(value)) return value.value;
  return undefined;
}

function isIntegerValue(value: unknown): boolean {
  const text = numberText(value);
  return text !== undefined && Number.isInteger(Number(text));
}

/**
 * An asset or voice id as its canonical decimal string, or undefined when the value is not a
 * positive int64. The spec allows an integer or a numeric string; a JavaScript number above 2^53
 * has already lost digits, so only safe integers are trusted in that form.
 */
export function readId(value: unknown): Id | undefined {
  let digits: string | undefined;
  if (typeof value === "string") digits = value;
  else if (typeof value === "number") digits = Number.isSafeInteger(value) ? String(value) : undefined;
  else if (typeof value === "bigint") digits = value.toString();
  else if (isLosslessNumber(value)) digits = value.value;
  if (digits === undefined || !/^\d{1,19}$/.test(digits)) return undefined;
  const id = BigInt(digits);
  return id >= 1n && id <= INT64_MAX ? id.toString() : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !isLosslessNumber(value);
}

/** Absent and null mean the same for optional fields (pydantic's `Optional[...] = None`). */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function orList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  const text = numberText(value);
  if (text !== undefined) return text;
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : String(value);
}

function checkId(value: unknown, loc: (string | number)[], what: string, out: Violation[]): void {
  if (readId(value) !== undefined) return;
  out.push({
    loc,
    msg: `${what} must be an asset id (a positive integer, or a string of digits), not ${show(value)}`,
    type: typeof value === "string" ? "int_parsing" : "int_type",
  });
}

function checkEnum<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  out: Violation[],
): T | undefined {
  const value = body[field];
  if (isAbsent(value)) return undefined;
  if (typeof value !== "string") {
    out.push({ loc: [field], msg: `${field} must be a string, not ${show(value)}`, type: "string_type" });
    return undefined;
  }
  if (!(allowed as readonly string[]).includes(value)) {
    out.push({
      loc: [field],
      msg: `${field} must be ${orList(allowed)}, not ${show(value)}`,
      type: "literal_error",
    });
    return undefined;
  }
  return value as T;
}

function checkBoolean(value: unknown, loc: (string | number)[], out: Violation[]): void {
  if (isAbsent(value) || typeof value === "boolean") return;
  out.push({
    loc,
    msg: `${String(loc[loc.length - 1])} must be true or false, not ${show(value)}`,
    type: "bool_type",
  });
}

/** The model whose rules apply, and how to name it in messages. */
interface RuleContext {
  readonly rules: ModelRules;
  readonly name: string;
}

function checkSource(
  body: Record<string, unknown>,
  context: RuleContext | undefined,
  out: Violation[],
): void {
  const source = body.source;
  if (isAbsent(source)) {
    if (context?.rules.source === "required") {
      out.push({
        loc: ["source"],
        msg: `${context.name} needs a source image: source {type: "image", content: <asset id>}`,
        type: "missing",
      });
    }
    return;
  }
  if (!isObject(source)) {
    out.push({ loc: ["source"], msg: `source must be an object, not ${show(source)}`, type: "dict_type" });
    return;
  }
  if (source.type === undefined) {
    out.push({ loc: ["source", "type"], msg: 'source type is required: "image"', type: "missing" });
  } else if (source.type !== "image") {
    out.push({
      loc: ["source", "type"],
      msg: `source type must be "image", not ${show(source.type)}`,
      type: "literal_error",
    });
  }
  if (source.content === undefined) {
    out.push({
      loc: ["source", "content"],
      msg: "source content is required: an image asset id",
      type: "missing",
    });
  } else {
    checkId(source.content, ["source", "content"], "source content", out);
  }
}

function checkCondition(condition: unknown, loc: (string | number)[], out: Violation[]): void {
  if (!isObject(condition)) {
    out.push({ loc, msg: `a condition must be an object, not ${show(condition)}`, type: "dict_type" });
    return;
  }
  const { type, content } = condition;
  if (type === undefined) {
    out.push({
      loc: [...loc, "type"],
      msg: 'condition type is required: "text" or "audio"',
      type: "missing",
    });
  } else if (type !== "text" && type !== "audio") {
    out.push({
      loc: [...loc, "type"],
      msg: `condition type must be "text" or "audio", not ${show(type)}`,
      type: "literal_error",
    });
  }
  if (content === undefined) {
    out.push({ loc: [...loc, "content"], msg: "condition content is required", type: "missing" });
    return;
  }
  if (type === "audio") {
    checkId(content, [...loc, "content"], "audio content", out);
  } else if (type === "text") {
    if (typeof content !== "string") {
      out.push({
        loc: [...loc, "content"],
        msg: `text content must be a string, not ${show(content)}`,
        type: "string_type",
      });
    } else if (content.trim() === "") {
      out.push({ loc: [...loc, "content"], msg: "text content must not be empty", type: "string_too_short" });
    }
  }
}

function checkChunk(chunk: unknown, index: number, context: RuleContext | undefined, out: Violation[]): void {
  const loc = ["chunks", index];
  if (!isObject(chunk)) {
    out.push({ loc, msg: `a chunk must be an object, not ${show(chunk)}`, type: "dict_type" });
    return;
  }

  const duration = chunk.duration;
  if (duration === undefined || duration === null) {
    out.push({ loc: [...loc, "duration"], msg: "duration is required: seconds of video", type: "missing" });
  } else if (!isIntegerValue(duration)) {
    out.push({
      loc: [...loc, "duration"],
      msg: `duration must be a whole number of seconds, not ${show(duration)}`,
      type: "int_type",
    });
  } else if (context && !isDurationAllowed(context.rules, Number(numberText(duration)))) {
    out.push({
      loc: [...loc, "duration"],
      msg: `${context.name} takes chunk durations of ${describeDurations(context.rules)}, not ${show(duration)}`,
      type: "model_rule",
    });
  }

  checkBoolean(chunk.enablePromptEnhancement, [...loc, "enablePromptEnhancement"], out);

  const conditions = chunk.conditions;
  if (conditions === undefined || conditions === null) {
    out.push({
      loc: [...loc, "conditions"],
      msg: "conditions is required: a list of text/audio conditions",
      type: "missing",
    });
    return;
  }
  if (!Array.isArray(conditions)) {
    out.push({
      loc: [...loc, "conditions"],
      msg: `conditions must be a list, not ${show(conditions)}`,
      type: "list_type",
    });
    return;
  }
  if (conditions.length === 0) {
    out.push({ loc: [...loc, "conditions"], msg: "a chunk needs at least one condition", type: "too_short" });
    return;
  }
  conditions.forEach((condition, j) => {
    checkCondition(condition, [...loc, "conditions", j], out);
  });

  if (!context) return;
  const has = (kind: string): boolean => conditions.some((c) => isObject(c) && c.type === kind);
  if (context.rules.text === "required" && !has("text")) {
    out.push({
      loc: [...loc, "conditions"],
      msg: `${context.name} needs a text condition in every chunk; chunk ${index} has none`,
      type: "model_rule",
    });
  }
  if (context.rules.audio === "required" && !has("audio")) {
    out.push({
      loc: [...loc, "conditions"],
      msg: `${context.name} needs an audio condition in every chunk; chunk ${index} has none`,
      type: "model_rule",
    });
  }
}

/**
 * Every structural problem (docs/service-api.md) and every broken per-model rule (4.1, from
 * MODEL_RULES) of a generation request body; an empty list means the service accepts it.
 * Accepts bodies parsed by `JSON.parse` or by lossless-json. All problems are reported at once.
 */
export function checkGenerationRequest(body: unknown): Violation[] {
  const out: Violation[] = [];
  if (!isObject(body)) {
    return [{ loc: [], msg: `the request body must be a JSON object, not ${show(body)}`, type: "dict_type" }];
  }

  // 1. Plain field types and enums.
  const model = checkEnum<Model>(body, "model", MODELS, out);
  const resolution = checkEnum(body, "resolution", RESOLUTIONS, out);
  const aspectRatio = checkEnum(body, "aspectRatio", ASPECT_RATIOS, out);
  if (!isAbsent(body.seed) && !isIntegerValue(body.seed)) {
    out.push({ loc: ["seed"], msg: `seed must be an integer, not ${show(body.seed)}`, type: "int_type" });
  }
  checkBoolean(body.enablePromptEnhancement, ["enablePromptEnhancement"], out);

  // 2. The rules of the model; with an invalid model name there are no rules to apply.
  let context: RuleContext | undefined;
  if (model !== undefined) context = { rules: MODEL_RULES[model], name: model };
  else if (isAbsent(body.model)) {
    context = {
      rules: MODEL_RULES[SANDBOX_DEFAULTS.model],
      name: `${SANDBOX_DEFAULTS.model} (the default model)`,
    };
  }
  if (context && resolution !== undefined && !context.rules.resolutions.includes(resolution)) {
    out.push({
      loc: ["resolution"],
      msg: `${context.name} takes resolution ${orList(context.rules.resolutions)}, not ${resolution}`,
      type: "model_rule",
    });
  }
  if (context && aspectRatio !== undefined && !context.rules.aspectRatios.includes(aspectRatio)) {
    out.push({
      loc: ["aspectRatio"],
      msg: `${context.name} takes aspect ratio ${orList(context.rules.aspectRatios)}, not ${aspectRatio}`,
      type: "model_rule",
    });
  }

  // 3. Source and chunks, whose rules depend on the model.
  checkSource(body, context, out);
  const chunks = body.chunks;
  if (chunks === undefined || chunks === null) {
    out.push({ loc: ["chunks"], msg: "chunks is required: a list of at least one chunk", type: "missing" });
  } else if (!Array.isArray(chunks)) {
    out.push({ loc: ["chunks"], msg: `chunks must be a list, not ${show(chunks)}`, type: "list_type" });
  } else if (chunks.length === 0) {
    out.push({ loc: ["chunks"], msg: "chunks must hold at least one chunk", type: "too_short" });
  } else {
    chunks.forEach((chunk, i) => {
      checkChunk(chunk, i, context, out);
    });
  }
  return out;
}
