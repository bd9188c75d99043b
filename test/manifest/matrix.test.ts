// Campaign forms: a matrix expands to the cross product of its lists, each expanded video
// validated like a written one, its problems placed at the template's field and named with the
// combination, once; takes make N jobs with stable ids and seeds. Real files in a temp folder.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/index.js";
import { MATRIX_MAX_VIDEOS } from "../../src/manifest/expand/matrix.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

async function load(text: string) {
  await ws.write("promo.yaml", text);
  return loadManifests(["promo.yaml"], { cwd: ws.dir });
}

const shown = (problems: { line: number; col: number; message: string }[]) =>
  problems.map((p) => `${p.line}:${p.col}: ${p.message}`);

/** A matrix of two languages (each a voice and a line) by the faces given, sourced from media/. */
const promo = (faces: string): string =>
  [
    "version: 1",
    "name: promo",
    "defaults: { model: avatar-h1, resolution: 540p }",
    "videos:",
    "  - id: promo-{lang}-{face}",
    "    matrix:",
    '      lang: [{ lang: en, voice: 17, line: "Hello" }, { lang: de, voice: 18, line: "Hallo" }]',
    `      face: [${faces}]`,
    "    source: ./media/{face}.png",
    "    chunks:",
    "      - duration: 10",
    '        speech: { voice: "{voice}", text: "{line}, {face}! {{not a placeholder}}" }',
  ].join("\n");

describe("matrix", () => {
  it("expands the cross product: ids, texts, voices and paths per combination, mapping items giving several values", async () => {
    const { manifests, problems } = await load(promo("face, host"));
    // media/host.png does not exist (host.jpg does): said once, for the first combination with it.
    expect(shown(problems)).toEqual([
      '9:13: promo-en-host: source "./media/host.png" does not exist (lang=en, face=host)',
    ]);
    expect(manifests).toEqual([]);

    const fixed = await load(promo("face"));
    expect(fixed.problems).toEqual([]);
    const jobs = fixed.manifests[0]!.jobs;
    expect(jobs.map((j) => j.id)).toEqual(["promo-en-face", "promo-de-face"]);
    expect(jobs.map((j) => j.spec.chunks[0]!.audio)).toEqual([
      { kind: "speech", voiceId: "17", text: "Hello, face! {not a placeholder}" },
      { kind: "speech", voiceId: "18", text: "Hallo, face! {not a placeholder}" },
    ]);
    expect(jobs.every((j) => j.spec.source?.kind === "file")).toBe(true);
    // Both at the template's line.
    expect(jobs.map((j) => j.line)).toEqual([5, 5]);
  });

  it("reports a per-model problem of the expansions at the template's field, naming the first combination, once", async () => {
    const { problems } = await load(
      [
        "version: 1",
        "videos:",
        "  - id: promo-{lang}-{face}",
        "    matrix:",
        "      lang: [en, de, fr]",
        "      face: [anna, ben]",
        "    model: actor-2",
        "    resolution: 540p",
        "    chunks:",
        '      - { duration: 5, text: "{lang} {face}" }',
      ].join("\n"),
    );
    expect(shown(problems)).toEqual([
      "8:17: promo-en-anna: actor-2 takes resolution 720p or 1080p, not 540p (lang=en, face=anna)",
    ]);
  });

  it("takes a whole placeholder's value as written (a number stays a number), and leaves out excluded combinations", async () => {
    const { manifests, problems } = await load(
      [
        "version: 1",
        "videos:",
        "  - id: clip-{d}-{r}",
        "    matrix:",
        "      d: [5, 10]",
        "      r: [720p, 1080p]",
        "      exclude: [{ d: 10, r: 1080p }]",
        "    model: actor-2",
        '    resolution: "{r}"',
        "    chunks:",
        '      - { duration: "{d}", text: "a clip of {d} seconds" }',
      ].join("\n"),
    );
    expect(problems).toEqual([]);
    const jobs = manifests[0]!.jobs;
    expect(jobs.map((j) => [j.id, j.seconds, j.spec.resolution])).toEqual([
      ["clip-5-720p", 5, "720p"],
      ["clip-5-1080p", 5, "1080p"],
      ["clip-10-720p", 10, "720p"],
    ]);
  });

  it("refuses an unknown placeholder, an id that does not name every axis, and a matrix past the limit, at their lines", async () => {
    const axis = Array.from({ length: 101 }, (_, i) => `v${i}`).join(", ");
    const { problems, manifests } = await load(
      [
        "version: 1",
        "defaults: { model: actor-2 }",
        "videos:",
        "  - id: a-{lang}",
        "    matrix: { lang: [en, de], face: [anna, ben] }",
        "    chunks:",
        '      - { duration: 5, text: "{lnag}" }',
        "  - id: b-{x}-{y}",
        `    matrix: { x: [${axis}], y: [${axis}] }`,
        "    chunks:",
        '      - { duration: 5, text: "{x}{y}" }',
      ].join("\n"),
    );
    expect(manifests).toEqual([]);
    expect(shown(problems)).toEqual([
      "4:9: the id of a matrix video must name every axis so that each video's id is unique: add {face}",
      `9:13: this matrix makes 10201 videos; one video may expand to at most ${MATRIX_MAX_VIDEOS} (split it, or shorten a list)`,
    ]);
    const placeholder = await load(
      [
        "version: 1",
        "defaults: { model: actor-2 }",
        "videos:",
        "  - id: a-{lang}",
        "    matrix: { lang: [en, de] }",
        "    chunks:",
        '      - { duration: 5, text: "{lnag}" }',
      ].join("\n"),
    );
    expect(shown(placeholder.problems)).toEqual([
      "7:30: unknown placeholder {lnag}; this matrix gives {lang} (write {{ for a brace)",
    ]);
  });

  it("places a duplicate expanded id at the template, with the combination", async () => {
    const { problems } = await load(
      [
        "version: 1",
        "defaults: { model: actor-2 }",
        "videos:",
        "  - id: promo-en",
        "    chunks: [{ duration: 5, text: hi }]",
        "  - id: promo-{lang}",
        "    matrix: { lang: [de, en] }",
        "    chunks: [{ duration: 5, text: hi }]",
      ].join("\n"),
    );
    expect(shown(problems)).toEqual([
      '6:9: promo-en: video id "promo-en" is already used at line 4; ids must be unique in a manifest (lang=en)',
    ]);
  });
});

describe("takes", () => {
  const video = (takes: string, seed = "") =>
    [
      "version: 1",
      "name: promo",
      `defaults: { model: actor-2${takes.startsWith("defaults") ? ", takes: 2" : ""} }`,
      "videos:",
      "  - id: intro",
      takes.startsWith("defaults") ? "" : `    takes: ${takes}`,
      seed,
      "    chunks: [{ duration: 5, text: hi }]",
    ]
      .filter((line) => line !== "")
      .join("\n");

  it("makes N jobs <id>~1..<id>~N with seeds seed, seed+1, ... when a seed is given", async () => {
    const { manifests, problems } = await load(video("3", "    seed: 40"));
    expect(problems).toEqual([]);
    const jobs = manifests[0]!.jobs;
    expect(jobs.map((j) => [j.key, j.spec.seed])).toEqual([
      ["promo/intro~1", 40],
      ["promo/intro~2", 41],
      ["promo/intro~3", 42],
    ]);
    expect(new Set(jobs.map((j) => j.specHash)).size).toBe(3);
  });

  it("gives takes without a seed fixed, distinct seeds: a reload makes the same jobs, and more takes add jobs", async () => {
    const three = (await load(video("3"))).manifests[0]!.jobs;
    const again = (await load(video("3"))).manifests[0]!.jobs;
    expect(again.map((j) => j.specHash)).toEqual(three.map((j) => j.specHash));
    expect(new Set(three.map((j) => j.spec.seed)).size).toBe(3);
    const five = (await load(video("5"))).manifests[0]!.jobs;
    expect(five.slice(0, 3).map((j) => j.specHash)).toEqual(three.map((j) => j.specHash));
    expect(five.map((j) => j.id)).toEqual(["intro~1", "intro~2", "intro~3", "intro~4", "intro~5"]);
  });

  it("takes `takes` from defaults, and refuses 0", async () => {
    const { manifests } = await load(video("defaults"));
    expect(manifests[0]!.jobs.map((j) => j.id)).toEqual(["intro~1", "intro~2"]);
    const zero = await load(video("0"));
    expect(zero.problems.map((p) => p.code)).toEqual(["E_INVALID_VALUE"]);
  });
});
