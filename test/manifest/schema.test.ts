import { readFile } from "node:fs/promises";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { ChunkInput, ManifestInput, VideoInput } from "../../src/manifest/index.js";
import { buildManifestSchema, manifestSchemaText } from "../../src/manifest/index.js";
import {
  type ASPECT_RATIOS,
  MODELS,
  type Model,
  type RESOLUTIONS,
} from "../../src/service-contract/api-types.js";
import { validatorSource } from "../../src/manifest/validate/validator-source.js";
import { MODEL_RULES } from "../../src/service-contract/model-rules.js";
import { REPO } from "./helpers.js";

describe("manifest JSON Schema", () => {
  it("the committed schemas/manifest.schema.json is the generated one (run `npm run gen:schema`)", async () => {
    const committed = await readFile(path.join(REPO, "schemas", "manifest.schema.json"), "utf8");
    expect(committed).toBe(manifestSchemaText());
  });

  it("the committed validator is the one generated from the schema (run `npm run gen:schema`)", async () => {
    const committed = await readFile(
      path.join(REPO, "src", "manifest", "validate", "validator.generated.ts"),
      "utf8",
    );
    expect(committed).toBe(validatorSource());
  });

  it("is a valid draft 2020-12 schema that ajv compiles in strict mode", () => {
    const ajv = new Ajv2020({
      strict: true,
      strictTypes: false,
      strictRequired: false,
      validateSchema: true,
    });
    const schema = buildManifestSchema();
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(() => ajv.compile(schema)).not.toThrow();
  });

  it("gives every field a title, a description and examples, for editors", () => {
    const missing: string[] = [];
    const visit = (node: unknown, where: string): void => {
      if (node === null || typeof node !== "object") return;
      const record = node as Record<string, unknown>;
      const props = record.properties as Record<string, Record<string, unknown>> | undefined;
      // Field declarations carry a type, const, enum, $ref or if; the per-model rule tables only narrow.
      if (props && (record.type === "object" || record.additionalProperties === false)) {
        for (const [name, field] of Object.entries(props)) {
          for (const key of ["title", "description", "examples"]) {
            if (!(key in field)) missing.push(`${where}/properties/${name}: ${key}`);
          }
        }
      }
      for (const [key, value] of Object.entries(record)) visit(value, `${where}/${key}`);
    };
    visit(buildManifestSchema(), "#");
    expect(missing).toEqual([]);
  });

  it("describes rows: a CSV file, or its file and a delimiter the loader takes (not a quote or a line break)", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const schema = JSON.parse(manifestSchemaText()) as { $defs: Record<string, unknown> };
    const rows = (schema.$defs.video as { properties: { rows: object } }).properties.rows;
    const check = ajv.compile({ $defs: schema.$defs, ...rows });
    for (const good of [
      "./leads.csv",
      { file: "./leads.csv" },
      { file: "leads.csv", delimiter: ";" },
      { file: "a.csv", delimiter: "\t" },
    ])
      expect(check(good), JSON.stringify(good)).toBe(true);
    for (const bad of [
      "",
      { delimiter: ";" },
      { file: "a.csv", delimiter: ";;" },
      { file: "a.csv", delimiter: '"' },
      { file: "a.csv", delimiter: "\n" },
      { file: "a.csv", sep: ";" },
      3,
    ])
      expect(check(bad), JSON.stringify(bad)).toBe(false);
    // Each form says what it is, for an editor's hover.
    for (const form of (rows as { anyOf: { description?: string }[] }).anyOf)
      expect(form.description).toBeTruthy();
  });

  it("states every per-model rule of MODEL_RULES", () => {
    const defs = buildManifestSchema().$defs as Record<string, Record<string, unknown>>;
    for (const model of MODELS) {
      const rules = MODEL_RULES[model];
      const def = JSON.stringify(defs[`model-${model}`]);
      expect(def).toContain(JSON.stringify({ enum: rules.resolutions }));
      expect(def).toContain(JSON.stringify({ enum: rules.aspectRatios }));
      expect(def).toContain(
        JSON.stringify(
          "oneOf" in rules.durations ? { enum: rules.durations.oneOf } : { maximum: rules.durations.max },
        ),
      );
      expect(def.includes('"required":["text"]')).toBe(rules.text === "required");
      expect(def.includes('"anyOf":[{"required":["audio"]},{"required":["speech"]}]')).toBe(
        rules.audio === "required",
      );
    }
  });

  it("infers the 'as written' types from the schema itself", () => {
    expectTypeOf<ManifestInput["version"]>().toEqualTypeOf<1>();
    expectTypeOf<VideoInput["model"]>().toEqualTypeOf<Model | undefined>();
    // null: the video clears what defaults give.
    expectTypeOf<VideoInput["resolution"]>().toEqualTypeOf<(typeof RESOLUTIONS)[number] | null | undefined>();
    expectTypeOf<VideoInput["aspectRatio"]>().toEqualTypeOf<
      (typeof ASPECT_RATIOS)[number] | null | undefined
    >();
    expectTypeOf<VideoInput["id"]>().toEqualTypeOf<string>();
    expectTypeOf<VideoInput["source"]>().toEqualTypeOf<
      string | { asset: number | string } | null | undefined
    >();
    expectTypeOf<ChunkInput["duration"]>().toEqualTypeOf<number>();
    expectTypeOf<ChunkInput["speech"]>().toEqualTypeOf<
      { voice: number | string; text: string } | undefined
    >();
    expectTypeOf<keyof VideoInput>().toEqualTypeOf<
      | "id"
      | "model"
      | "resolution"
      | "aspectRatio"
      | "seed"
      | "source"
      | "takes"
      | "matrix"
      | "rows"
      | "chunks"
    >();
  });
});
