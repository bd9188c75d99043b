// The patterns and limits of the manifest's schema (schema.ts), and the template variant's helpers: a
// video with `matrix:` or `rows:` holds placeholders `{name}`, so its fields may be a text with one.
import type { Model } from "../../service-contract/api-types.js";
import { conditional, type Doc, type JsonSchema, type Schema, written } from "./schema-builder.js";

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
export const TEMPLATE_ID_PATTERN = `^(?=[^{]*\\{)(?:[A-Za-z0-9_-]|${PLACEHOLDER})(?:[A-Za-z0-9._-]|${PLACEHOLDER})*$`;
/** A video that is a template, as matrix.ts tells one. */
export const IS_TEMPLATE: JsonSchema = {
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
export function orPlaceholder<T>(schema: Schema<T>): Schema<T> {
  const { title, description, examples, ...rule } = schema.json as JsonSchema & Doc;
  return written<T>(
    { title, description: `${description} In a template: or a text with a {placeholder}.`, examples },
    unlessPlaceholder(rule),
  );
}

/** `rule`, unless the value is a text that holds a placeholder. */
export function unlessPlaceholder(rule: JsonSchema): JsonSchema {
  return conditional(HOLDS_PLACEHOLDER, undefined, rule);
}
