// A tiny typed JSON Schema builder: each helper returns the JSON Schema object together with the
// TypeScript type of the values it accepts, so the manifest's "as written" types are inferred from
// the very object that is published as schemas/manifest.schema.json. One source, no drift.
//
// Every field helper takes title, description and examples, so editors always have help to show.

export type JsonSchema = { readonly [keyword: string]: unknown };

declare const VALUE: unique symbol;

/** A JSON Schema that accepts values of type `T` (the type is a compile-time tag only). */
export interface Schema<T> {
  readonly json: JsonSchema;
  readonly [VALUE]?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

export interface Doc {
  readonly title: string;
  readonly description: string;
  readonly examples: readonly unknown[];
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

function make<T>(json: JsonSchema): Schema<T> {
  return { json };
}

export function string(doc: Doc, extra: JsonSchema = {}): Schema<string> {
  return make({ ...doc, type: "string", ...extra });
}

export function integer(doc: Doc, extra: JsonSchema = {}): Schema<number> {
  return make({ ...doc, type: "integer", ...extra });
}

export function boolean(doc: Doc): Schema<boolean> {
  return make({ ...doc, type: "boolean" });
}

export function literal<const V extends string | number | boolean>(value: V, doc: Doc): Schema<V> {
  return make({ ...doc, const: value });
}

export function oneOfValues<const V extends readonly string[]>(values: V, doc: Doc): Schema<V[number]> {
  return make({ ...doc, enum: values });
}

export function array<T>(items: Schema<T>, doc: Doc, extra: JsonSchema = {}): Schema<T[]> {
  return make({ ...doc, type: "array", items: items.json, ...extra });
}

type ObjectOf<P extends Record<string, Schema<unknown>>, R extends keyof P> = Simplify<
  { [K in R]: Infer<P[K]> } & { [K in Exclude<keyof P, R>]?: Infer<P[K]> }
>;

/**
 * A schema written out as JSON, for a value the loader reads itself before the schema sees the rest
 * (a matrix: matrix.ts checks it and names its problems); `T` is declared, not inferred.
 */
export function written<T>(doc: Doc, json: JsonSchema): Schema<T> {
  return make({ ...doc, ...json });
}

/** A closed object: unknown fields are errors. */
export function object<P extends Record<string, Schema<unknown>>, R extends keyof P & string = never>(
  doc: Doc,
  properties: P,
  required: readonly R[],
  extra: JsonSchema = {},
): Schema<ObjectOf<P, R>> {
  const props: Record<string, JsonSchema> = {};
  for (const [key, schema] of Object.entries(properties)) props[key] = schema.json;
  return make({
    ...doc,
    type: "object",
    properties: props,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...extra,
  });
}

/** JSON Schema's `if` / `then` / `else`, in that key order. */
export function conditional(when: JsonSchema, then?: JsonSchema, otherwise?: JsonSchema): JsonSchema {
  const out: Record<string, unknown> = { if: when };
  // `then` is a JSON Schema keyword here, not a thenable.
  if (then !== undefined) out.then = then;
  if (otherwise !== undefined) out.else = otherwise;
  return out;
}

/**
 * A value that is either a string or something else, told apart by JSON type. Written as
 * if/then/else rather than anyOf so that a validator reports the errors of the one branch that
 * applies instead of the errors of every branch.
 */
export function stringOr<A, B>(doc: Doc, whenString: Schema<A>, otherwise: Schema<B>): Schema<A | B> {
  return make({ ...doc, ...conditional({ type: "string" }, whenString.json, otherwise.json) });
}

/**
 * `schema`, or null: a video's `null` clears what it would inherit from defaults. Written as an
 * if/else rather than anyOf, so that a wrong value gets the message of `schema` alone.
 */
export function clearable<T>(schema: Schema<T>): Schema<T | null> {
  const { title, description, examples } = schema.json;
  return make({
    title,
    description: `${String(description ?? "")} null: none, even if defaults give one.`.trim(),
    examples,
    ...conditional({ type: "null" }, undefined, schema.json),
  });
}

/** Same as `stringOr`, split on integer vs anything else. */
export function integerOr<A, B>(doc: Doc, whenInteger: Schema<A>, otherwise: Schema<B>): Schema<A | B> {
  return make({ ...doc, ...conditional({ type: "integer" }, whenInteger.json, otherwise.json) });
}

/**
 * Registers `schema` under `$defs/name` and returns a reference to it that keeps its own title,
 * description and examples (editors show the help of the field, not of the definition).
 */
export class Definitions {
  readonly defs: Record<string, JsonSchema> = {};

  define<T>(name: string, schema: Schema<T>): Schema<T> {
    this.defs[name] = schema.json;
    const { title, description, examples } = schema.json;
    return make({ $ref: `#/$defs/${name}`, title, description, examples });
  }

  /** A plain schema object (no field of its own), such as a table of rules. */
  defineRaw(name: string, json: JsonSchema): JsonSchema {
    this.defs[name] = json;
    return { $ref: `#/$defs/${name}` };
  }
}

/** Adds keywords (per-model rules, cross-field rules) that refine a schema without changing its type. */
export function refine<T>(schema: Schema<T>, extra: JsonSchema): Schema<T> {
  return make({ ...schema.json, ...extra });
}
