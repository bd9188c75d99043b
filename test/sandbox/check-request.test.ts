// The structural and per-model checks of a generation request, directly and through the sandbox's
// 422, table-driven so every rule of docs/service-api.md has a row.
import { parse } from "lossless-json";
import { describe, expect, test } from "vitest";
import { MODELS } from "../../src/service-contract/api-types.js";
import { checkGenerationRequest, readId } from "../../src/service-contract/check-request.js";
import { MODEL_RULES } from "../../src/service-contract/model-rules.js";
import { actorRequest, avatarRequest, withSandbox } from "./helpers.js";

const text = (content = "hello") => ({ type: "text", content });
const audio = (content: unknown = "7") => ({ type: "audio", content });

interface Row {
  readonly name: string;
  readonly body: unknown;
  readonly loc: (string | number)[];
  readonly type: string;
  readonly msg?: RegExp;
}

const ROWS: Row[] = [
  { name: "body not an object", body: [1], loc: [], type: "dict_type" },
  { name: "chunks missing", body: { model: "actor-2" }, loc: ["chunks"], type: "missing" },
  { name: "chunks not a list", body: { chunks: {} }, loc: ["chunks"], type: "list_type" },
  { name: "chunks empty", body: { chunks: [] }, loc: ["chunks"], type: "too_short" },
  { name: "chunk not an object", body: { chunks: [5] }, loc: ["chunks", 0], type: "dict_type" },
  { name: "unknown model", body: actorRequest({ model: "actor-9" }), loc: ["model"], type: "literal_error" },
  { name: "model not a string", body: actorRequest({ model: 2 }), loc: ["model"], type: "string_type" },
  {
    name: "unknown resolution",
    body: actorRequest({ resolution: "4k" }),
    loc: ["resolution"],
    type: "literal_error",
  },
  {
    name: "unknown aspect ratio",
    body: actorRequest({ aspectRatio: "4:3" }),
    loc: ["aspectRatio"],
    type: "literal_error",
  },
  { name: "seed not integer", body: actorRequest({ seed: 1.5 }), loc: ["seed"], type: "int_type" },
  {
    name: "top-level enablePromptEnhancement not boolean",
    body: actorRequest({ enablePromptEnhancement: "yes" }),
    loc: ["enablePromptEnhancement"],
    type: "bool_type",
  },
  {
    name: "source type asset",
    body: actorRequest({ source: { type: "asset", content: "5" } }),
    loc: ["source", "type"],
    type: "literal_error",
  },
  {
    name: "source content not an id",
    body: actorRequest({ source: { type: "image", content: "five" } }),
    loc: ["source", "content"],
    type: "int_parsing",
  },
  { name: "source not an object", body: actorRequest({ source: "5" }), loc: ["source"], type: "dict_type" },
  {
    name: "duration missing",
    body: { model: "actor-2", chunks: [{ conditions: [text()] }] },
    loc: ["chunks", 0, "duration"],
    type: "missing",
  },
  {
    name: "duration fractional",
    body: { model: "actor-2", chunks: [{ duration: 5.5, conditions: [text()] }] },
    loc: ["chunks", 0, "duration"],
    type: "int_type",
  },
  {
    name: "duration a string",
    body: { model: "actor-2", chunks: [{ duration: "5", conditions: [text()] }] },
    loc: ["chunks", 0, "duration"],
    type: "int_type",
  },
  {
    name: "conditions missing",
    body: { model: "actor-2", chunks: [{ duration: 5 }] },
    loc: ["chunks", 0, "conditions"],
    type: "missing",
  },
  {
    name: "conditions empty",
    body: { model: "actor-2", chunks: [{ duration: 5, conditions: [] }] },
    loc: ["chunks", 0, "conditions"],
    type: "too_short",
  },
  {
    name: "condition type video",
    body: {
      model: "actor-2",
      chunks: [{ duration: 5, conditions: [text(), { type: "video", content: "1" }] }],
    },
    loc: ["chunks", 0, "conditions", 1, "type"],
    type: "literal_error",
  },
  {
    name: "audio content not an id",
    body: { model: "actor-2", chunks: [{ duration: 5, conditions: [text(), audio("x1")] }] },
    loc: ["chunks", 0, "conditions", 1, "content"],
    type: "int_parsing",
  },
  {
    name: "audio content negative",
    body: { model: "actor-2", chunks: [{ duration: 5, conditions: [text(), audio(-3)] }] },
    loc: ["chunks", 0, "conditions", 1, "content"],
    type: "int_type",
  },
  {
    name: "text content empty",
    body: { model: "actor-2", chunks: [{ duration: 5, conditions: [text("  ")] }] },
    loc: ["chunks", 0, "conditions", 0, "content"],
    type: "string_too_short",
  },
  {
    name: "chunk enablePromptEnhancement not boolean",
    body: { model: "actor-2", chunks: [{ duration: 5, conditions: [text()], enablePromptEnhancement: 1 }] },
    loc: ["chunks", 0, "enablePromptEnhancement"],
    type: "bool_type",
  },
  // Per-model rules of 4.1.
  {
    name: "actor-2 at 540p",
    body: actorRequest({ resolution: "540p" }),
    loc: ["resolution"],
    type: "model_rule",
    msg: /^actor-2 takes resolution 720p or 1080p, not 540p$/,
  },
  {
    name: "actor-1 at 540p",
    body: actorRequest({ model: "actor-1", resolution: "540p" }),
    loc: ["resolution"],
    type: "model_rule",
  },
  {
    name: "actor-4 at 720p",
    body: actorRequest({ model: "actor-4", resolution: "720p" }),
    loc: ["resolution"],
    type: "model_rule",
    msg: /actor-4 takes resolution 540p, not 720p/,
  },
  {
    name: "avatar at 1080p",
    body: { ...avatarRequest("5", "7"), resolution: "1080p" },
    loc: ["resolution"],
    type: "model_rule",
  },
  {
    name: "actor-2 at 1:1",
    body: actorRequest({ aspectRatio: "1:1" }),
    loc: ["aspectRatio"],
    type: "model_rule",
    msg: /actor-2 takes aspect ratio 16:9 or 9:16, not 1:1/,
  },
  {
    name: "actor-2 chunk of 7 s",
    body: { model: "actor-2", chunks: [{ duration: 7, conditions: [text()] }] },
    loc: ["chunks", 0, "duration"],
    type: "model_rule",
    msg: /5 or 10 seconds, not 7/,
  },
  {
    name: "actor-4 second chunk of 20 s",
    body: {
      model: "actor-4",
      chunks: [
        { duration: 10, conditions: [text()] },
        { duration: 20, conditions: [text()] },
      ],
    },
    loc: ["chunks", 1, "duration"],
    type: "model_rule",
  },
  {
    name: "avatar chunk of 61 s",
    body: avatarRequest("5", "7", 61),
    loc: ["chunks", 0, "duration"],
    type: "model_rule",
    msg: /1 to 60 seconds, not 61/,
  },
  {
    name: "avatar chunk of 0 s",
    body: avatarRequest("5", "7", 0),
    loc: ["chunks", 0, "duration"],
    type: "model_rule",
  },
  {
    name: "actor chunk without text",
    body: { model: "actor-2", chunks: [{ duration: 5, conditions: [audio()] }] },
    loc: ["chunks", 0, "conditions"],
    type: "model_rule",
    msg: /actor-2 needs a text condition in every chunk/,
  },
  {
    name: "default model chunk without text",
    body: { chunks: [{ duration: 5, conditions: [audio()] }] },
    loc: ["chunks", 0, "conditions"],
    type: "model_rule",
    msg: /the default model/,
  },
  {
    name: "avatar chunk without audio",
    body: { ...avatarRequest("5", "7"), chunks: [{ duration: 5, conditions: [text()] }] },
    loc: ["chunks", 0, "conditions"],
    type: "model_rule",
    msg: /avatar-h1 needs an audio condition in every chunk/,
  },
  {
    name: "avatar-h1-pro without source",
    body: { model: "avatar-h1-pro", chunks: [{ duration: 5, conditions: [audio()] }] },
    loc: ["source"],
    type: "missing",
    msg: /avatar-h1-pro needs a source image/,
  },
];

describe("checkGenerationRequest", () => {
  test.each(ROWS)("$name -> $type at $loc", ({ body, loc, type, msg }) => {
    const violations = checkGenerationRequest(body);
    const hit = violations.find((v) => JSON.stringify(v.loc) === JSON.stringify(loc) && v.type === type);
    expect(hit, JSON.stringify(violations)).toBeDefined();
    if (msg) expect(hit?.msg).toMatch(msg);
  });

  test("valid requests of every model pass, with ids as numbers, strings or lossless numbers", () => {
    for (const model of MODELS) {
      const rules = MODEL_RULES[model];
      const duration = "oneOf" in rules.durations ? rules.durations.oneOf[0] : rules.durations.max;
      const body = {
        model,
        resolution: rules.resolutions[0],
        aspectRatio: rules.aspectRatios[0],
        source: { type: "image", content: 12 },
        seed: 7,
        chunks: [
          { duration, conditions: [text(), audio("1800000000000000001")], enablePromptEnhancement: true },
        ],
      };
      expect(checkGenerationRequest(body), model).toEqual([]);
    }
    const lossless = parse(
      '{"model":"avatar-h1","source":{"type":"image","content":1800000000000000001},' +
        '"chunks":[{"duration":60,"conditions":[{"type":"audio","content":1800000000000000003}]}]}',
    );
    expect(checkGenerationRequest(lossless)).toEqual([]);
  });

  test("defaults: no model, resolution or aspect ratio is a valid actor-2 request", () => {
    expect(checkGenerationRequest({ chunks: [{ duration: 10, conditions: [text()] }] })).toEqual([]);
  });

  test("every problem is reported at once", () => {
    const violations = checkGenerationRequest({
      model: "actor-4",
      resolution: "1080p",
      chunks: [{ duration: 3, conditions: [audio()] }],
    });
    expect(violations.map((v) => v.loc.join("."))).toEqual([
      "resolution",
      "chunks.0.duration",
      "chunks.0.conditions",
    ]);
  });

  test("readId keeps int64 ids exact and refuses what is not one", () => {
    expect(readId("1800000000000000001")).toBe("1800000000000000001");
    expect(readId("007")).toBe("7");
    expect(readId(42)).toBe("42");
    expect(readId(2 ** 53 + 2)).toBeUndefined();
    expect(readId("9223372036854775808")).toBeUndefined();
    expect(readId("0")).toBeUndefined();
    expect(readId("1.5")).toBeUndefined();
    expect(readId(null)).toBeUndefined();
  });
});

describe("the sandbox answers 422 with the violations under body", () => {
  test.each(ROWS.filter((r) => r.name !== "body not an object"))("$name", async ({ body, loc, type }) => {
    await withSandbox({}, async (api) => {
      const res = await api.call("POST", "/v1/generations", { body });
      expect(res.status).toBe(422);
      expect(res.json.detail).toContainEqual(expect.objectContaining({ loc: ["body", ...loc], type }));
      expect(api.sandbox.counters.generationsCreated).toBe(0);
    });
  });

  test("malformed JSON and an empty body are 422 too", async () => {
    await withSandbox({}, async (api) => {
      const bad = await api.call("POST", "/v1/generations", { body: '{"chunks": [' });
      expect(bad.status).toBe(422);
      expect(bad.json.detail[0]).toMatchObject({ type: "json_invalid" });
      expect(bad.json.detail[0].loc[0]).toBe("body");
      const empty = await api.call("POST", "/v1/generations", { body: "" });
      expect(empty.status).toBe(422);
      expect(empty.json.detail[0]).toMatchObject({ loc: ["body"], type: "missing" });
    });
  });

  test("a non-integer path id is 422, an unknown one 404", async () => {
    await withSandbox({}, async (api) => {
      const bad = await api.call("GET", "/v1/generations/abc");
      expect(bad.status).toBe(422);
      expect(bad.json.detail[0]).toMatchObject({ loc: ["path", "id"], type: "int_parsing" });
      expect((await api.call("GET", "/v1/generations/123456")).status).toBe(404);
      expect((await api.call("GET", "/v1/assets/1.5")).status).toBe(422);
    });
  });
});
