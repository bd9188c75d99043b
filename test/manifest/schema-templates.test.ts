// The published schema as an editor uses it: the YAML language server checks the manifest as written,
// before reel expands any template (a video with `matrix:` or `rows:`). Its placeholders must pass,
// while everything that holds none is checked as strictly as in a written video.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, REPO, type Workspace } from "./helpers.js";

let check: (value: unknown) => ErrorObject[];
beforeAll(async () => {
  const schema = JSON.parse(
    await readFile(path.join(REPO, "schemas", "manifest.schema.json"), "utf8"),
  ) as object;
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  check = (value) => (validate(value) ? [] : (validate.errors ?? []));
});

/** Where the schema finds problems ("/videos/0/id pattern"), the `if` summaries left out. */
const problems = (value: unknown): string[] =>
  [
    ...new Set(
      check(value)
        .filter((e) => e.keyword !== "if")
        .map((e) => `${e.instancePath} ${e.keyword}`),
    ),
  ].sort();

const manifest = (video: Record<string, unknown>, defaults: Record<string, unknown> = {}) => ({
  version: 1,
  defaults: { model: "avatar-h1", source: "./media/face.png", ...defaults },
  videos: [video],
});

const matrixVideo = (fields: Record<string, unknown>, chunk: Record<string, unknown> = {}) =>
  manifest({
    id: "promo-{lang}",
    matrix: { lang: [{ lang: "en", voice: 17, d: 5, res: "540p" }] },
    chunks: [{ duration: 5, speech: { voice: "{voice}", text: "Hi" }, ...chunk }],
    ...fields,
  });

describe("the published schema, as an editor checks a manifest", () => {
  it("passes every example manifest under manifests/ as written, templates included", async () => {
    const dir = path.join(REPO, "manifests");
    const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml")).sort();
    expect(files).toEqual(expect.arrayContaining(["campaign.yaml", "welcome.yaml"]));
    const failing = Object.fromEntries(
      await Promise.all(
        files.map(async (f) => [f, problems(parse(await readFile(path.join(dir, f), "utf8")))] as const),
      ),
    );
    expect(failing).toEqual(Object.fromEntries(files.map((f) => [f, []])));
  });

  it("takes a placeholder in any field of a template video, whatever the field's type", () => {
    const rowsVideo = manifest({
      id: "welcome-{lead_id}",
      rows: { file: "./leads.csv", delimiter: ";" },
      model: "{model}",
      resolution: "{res}",
      aspectRatio: "{ratio}",
      seed: "{seed}",
      takes: "{takes}",
      source: { asset: "{photo_asset}" },
      chunks: [
        {
          duration: "{d}",
          text: "{mood}",
          audio: { asset: "id-{n}" },
          enablePromptEnhancement: "{enhance}",
        },
        { duration: "{d}", speech: { voice: "{voice}", text: "Hi {first_name}" } },
      ],
    });
    expect(problems(rowsVideo)).toEqual([]);
    // The per-model rules of the default model (avatar-h1 takes 1 to 60 seconds) leave a placeholder to reel.
    expect(problems(matrixVideo({ resolution: "{res}" }, { duration: "{d}" }))).toEqual([]);
    expect(
      problems(matrixVideo({ model: "actor-2", resolution: "{res}" }, { duration: "{d}", text: "waves" })),
    ).toEqual([]);
  });

  it("still flags what a template video gets wrong outside its placeholders", () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ colour: "red" }, {}, "/videos/0 additionalProperties"],
      [{ resolution: "4k" }, {}, "/videos/0/resolution enum"],
      // A model's rules hold for a value that is no placeholder: avatar-h1 takes 540p or 720p.
      [{ resolution: "1080p" }, {}, "/videos/0/resolution enum"],
      [{ model: "actor-3" }, {}, "/videos/0/model enum"],
      [{ seed: "seven" }, {}, "/videos/0/seed type"],
      [{ takes: 0 }, {}, "/videos/0/takes minimum"],
      [{ takes: "2" }, {}, "/videos/0/takes type"],
      [{}, { duration: "five" }, "/videos/0/chunks/0/duration type"],
      [{}, { duration: 61 }, "/videos/0/chunks/0/duration maximum"],
      [{}, { speech: { voice: "seventeen", text: "Hi" } }, "/videos/0/chunks/0/speech/voice pattern"],
      [{}, { speech: { voice: "{voice}" } }, "/videos/0/chunks/0/speech required"],
      [{}, { sound: "x.mp3" }, "/videos/0/chunks/0 additionalProperties"],
      [{}, { audio: "http://example.com/{lang}.mp3" }, "/videos/0/chunks/0/audio pattern"],
      // `{{` and `}}` write braces: no placeholder, so the field's own type applies.
      [{}, { duration: "{{d}}" }, "/videos/0/chunks/0/duration type"],
      [{ id: "promo {lang}" }, {}, "/videos/0/id pattern"],
      [{ id: ".promo-{lang}" }, {}, "/videos/0/id pattern"],
      [{ id: "promo-{{lang}}" }, {}, "/videos/0/id pattern"],
      // A template's id names its axes or columns: without a placeholder, every video would share it.
      [{ id: "promo" }, {}, "/videos/0/id pattern"],
      [{ matrix: { lang: "en" } }, {}, "/videos/0/matrix/lang type"],
      [{ matrix: { lang: [] } }, {}, "/videos/0/matrix/lang minItems"],
      [{ rows: { file: "./leads.csv", sep: ";" } }, {}, "/videos/0/rows additionalProperties"],
    ];
    for (const [fields, chunk, expected] of cases)
      expect(problems(matrixVideo(fields, chunk)), JSON.stringify({ fields, chunk })).toContain(expected);
  });

  it("checks a video without matrix or rows as strictly as before: its braces are not placeholders", () => {
    const written = manifest({
      id: "welcome-{lead_id}",
      resolution: "{res}",
      chunks: [{ duration: "{d}", speech: { voice: "{voice}", text: "Hi" } }],
    });
    expect(problems(written)).toEqual(
      expect.arrayContaining([
        "/videos/0/id pattern",
        "/videos/0/resolution enum",
        "/videos/0/chunks/0/duration type",
        "/videos/0/chunks/0/speech/voice pattern",
      ]),
    );
  });
});

// reel validates the videos a template makes, never the template itself: what the schema lets a
// template hold changes none of its checks or messages.
describe("reel's own checks, beside the schema's template variant", () => {
  let ws: Workspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(async () => {
    await ws.cleanup();
  });
  const problemsOf = async (text: string) => {
    await ws.write("promo.yaml", text);
    const { problems } = await loadManifests(["promo.yaml"], { cwd: ws.dir });
    return problems.map((p) => `${p.line}:${p.col} ${p.code} ${p.message}`);
  };

  it("refuses braces in a video without matrix or rows, in the words it always used", async () => {
    const text = [
      "version: 1",
      "defaults: { model: avatar-h1, source: ./media/face.png }",
      "videos:",
      "  - id: welcome-{lead_id}",
      '    resolution: "{res}"',
      "    chunks:",
      '      - duration: "{d}"',
      '        speech: { voice: "{voice}", text: "Hi" }',
    ].join("\n");
    expect(await problemsOf(text)).toEqual([
      `4:9 E_UNSAFE_NAME id "welcome-{lead_id}" is not safe as a file name: use letters, digits, '.', '_', '-', not starting with '.', at most 100 characters`,
      '5:17 E_INVALID_VALUE resolution must be 540p, 720p or 1080p, not "{res}"',
      '7:19 E_INVALID_VALUE duration must be a whole number of seconds, not "{d}"',
      '8:26 E_INVALID_VALUE voice must be a positive id (digits only), not "{voice}"',
    ]);
  });

  it("checks a made video whose value keeps a brace (written {{ }}) as any other", async () => {
    const text = [
      "version: 1",
      "defaults: { model: avatar-h1, source: ./media/face.png }",
      "videos:",
      "  - id: promo-{lang}",
      "    matrix: { lang: [en, de] }",
      '    resolution: "{{lang}}"',
      "    chunks:",
      '      - { duration: 5, speech: { voice: 17, text: "Hi" } }',
    ].join("\n");
    expect(await problemsOf(text)).toEqual([
      '6:17 E_INVALID_VALUE promo-en: resolution must be 540p, 720p or 1080p, not "{lang}" (lang=en)',
    ]);
  });
});
