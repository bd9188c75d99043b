import { describe, expect, it } from "vitest";
import {
  formatProblems,
  globToRegExp,
  type Job,
  type JobSpec,
  makeJobFilter,
  makePlan,
  type NormalizedManifest,
  type PlanStateView,
  type Problem,
  toGenerationRequest,
} from "../../src/manifest/index.js";
import { checkGenerationRequest } from "../../src/service-contract/check-request.js";

const file = (sha: string, format: "png" | "mp3" = "png") =>
  ({
    kind: "file",
    path: `/w/${sha}.${format}`,
    sha256: sha.repeat(64).slice(0, 64),
    size: 10,
    format,
    stamp: { dev: "1", ino: "1", size: 10, mtimeNs: "0", ctimeNs: "0" },
  }) as const;

describe("toGenerationRequest", () => {
  it("builds the wire body: text then audio conditions, source as image, optional fields only when given", () => {
    const spec: JobSpec = {
      model: "avatar-h1",
      resolution: "540p",
      seed: 0,
      source: file("a"),
      chunks: [
        { duration: 20, text: "smiles", audio: file("b", "mp3"), enablePromptEnhancement: false },
        { duration: 5, audio: { kind: "speech", voiceId: "17", text: "Hi." } },
        { duration: 5, audio: { kind: "asset", id: "1800000000000000001" } },
      ],
    };
    const ids = new Map([
      ["file", "11"],
      ["speech", "22"],
    ]);
    const body = toGenerationRequest(spec, (ref) =>
      ref.kind === "asset" ? ref.id : `${ids.get(ref.kind)}${ref.kind === "file" ? ref.format : ""}`,
    );
    expect(body).toEqual({
      model: "avatar-h1",
      resolution: "540p",
      seed: 0,
      source: { type: "image", content: "11png" },
      chunks: [
        {
          duration: 20,
          conditions: [
            { type: "text", content: "smiles" },
            { type: "audio", content: "11mp3" },
          ],
          enablePromptEnhancement: false,
        },
        { duration: 5, conditions: [{ type: "audio", content: "22" }] },
        { duration: 5, conditions: [{ type: "audio", content: "1800000000000000001" }] },
      ],
    });
    expect(Object.keys(body)).toEqual(["model", "resolution", "seed", "source", "chunks"]);
    const wire = toGenerationRequest(spec, () => "5");
    expect(checkGenerationRequest(JSON.parse(JSON.stringify(wire)))).toEqual([]);
  });
});

describe("--only globs", () => {
  it("matches manifest/id with *, ? and **", () => {
    const keys = ["spring/intro", "spring/scene-1", "spring/scene-12", "autumn/intro", "a.b/x"];
    const pick = (...globs: string[]) => keys.filter(makeJobFilter(globs));
    expect(pick()).toEqual(keys);
    expect(pick("spring/*")).toEqual(["spring/intro", "spring/scene-1", "spring/scene-12"]);
    expect(pick("spring/scene-?")).toEqual(["spring/scene-1"]);
    expect(pick("intro")).toEqual(["spring/intro", "autumn/intro"]);
    expect(pick("*/intro", "a.b/*")).toEqual(["spring/intro", "autumn/intro", "a.b/x"]);
    expect(pick("**")).toEqual(keys);
    expect(pick("s*")).toEqual(["spring/scene-1", "spring/scene-12"]);
    expect(pick("a?b/x")).toEqual(["a.b/x"]);
    expect(globToRegExp("a.b/*").test("axb/x")).toBe(false);
  });
});

function job(manifest: string, id: string, spec: Partial<JobSpec> = {}): Job {
  const full: JobSpec = { model: "actor-2", chunks: [{ duration: 5, text: "hi" }], ...spec };
  return {
    manifest,
    id,
    key: `${manifest}/${id}`,
    specHash: `h-${id}`,
    spec: full,
    seconds: full.chunks.reduce((s, c) => s + c.duration, 0),
    model: full.model,
    line: 1,
    col: 1,
  };
}

describe("makePlan", () => {
  const manifests: NormalizedManifest[] = [
    {
      name: "m",
      file: "m.yaml",
      jobs: [
        job("m", "a", { source: file("1"), chunks: [{ duration: 10, text: "x", audio: file("2", "mp3") }] }),
        job("m", "b", { source: { ...file("1"), path: "/w/copy.png" } }),
        job("m", "c", {
          model: "avatar-h1",
          chunks: [{ duration: 30, audio: { kind: "speech", voiceId: "1", text: "t" } }],
        }),
        job("m", "d", { source: { kind: "url", url: "https://x.test/a.png", use: "image" } }),
        job("m", "e", { source: file("3") }),
        job("m", "f"),
        job("m", "g", {
          chunks: [{ duration: 5, text: "x", audio: { kind: "speech", voiceId: "2", text: "u" } }],
        }),
      ],
    },
  ];

  it("without a state, everything is new", () => {
    const plan = makePlan(manifests);
    expect(plan.jobs.new).toHaveLength(7);
    expect(plan.uploads.new.map((u) => [u.sha256.slice(0, 1), u.paths])).toEqual([
      ["1", ["/w/1.png", "/w/copy.png"]],
      ["2", ["/w/2.mp3"]],
      ["3", ["/w/3.png"]],
    ]);
    expect(plan.downloads).toEqual(["https://x.test/a.png"]);
    expect(plan.speech.new).toEqual([
      { voiceId: "1", text: "t" },
      { voiceId: "2", text: "u" },
    ]);
    expect(plan).toMatchObject({ manifests: 1, videos: 7, seconds: 65 });
    expect(plan.models).toEqual([
      { model: "actor-2", videos: 6, seconds: 35, newVideos: 6, newSeconds: 35 },
      { model: "avatar-h1", videos: 1, seconds: 30, newVideos: 1, newSeconds: 30 },
    ]);
  });

  it("sorts jobs by state and counts only what new jobs need", () => {
    const status: Record<string, ReturnType<PlanStateView["jobStatus"]>> = {
      "m/a": "done",
      "m/b": "new",
      "m/c": "in-flight",
      "m/d": "failed",
      "m/e": "uncertain",
    };
    const view: PlanStateView = {
      jobStatus: (key) => status[key] ?? "new",
      assetUploaded: (sha) => sha.startsWith("1"),
      speechMade: (voice) => voice === "2",
      madeAs: () => undefined,
    };
    const plan = makePlan(manifests, view);
    expect(plan.jobs).toEqual({
      new: ["m/b", "m/f", "m/g"],
      done: ["m/a"],
      inFlight: ["m/c"],
      failed: ["m/d"],
      uncertain: ["m/e"],
    });
    expect(plan.uploads.new).toEqual([]);
    expect(plan.uploads.cached.map((u) => u.paths)).toEqual([["/w/copy.png"]]);
    expect(plan.downloads).toEqual([]);
    expect(plan.speech).toEqual({ new: [], cached: [{ voiceId: "2", text: "u" }] });
    expect(plan.models[0]).toEqual({
      model: "actor-2",
      videos: 6,
      seconds: 35,
      newVideos: 3,
      newSeconds: 15,
    });
  });
});

describe("formatProblems", () => {
  const problems: Problem[] = [
    { file: "a.yaml", line: 2, col: 5, message: 'unknown field "x"', code: "E_UNKNOWN_FIELD" },
    { file: "gone.yaml", line: 0, col: 0, message: "no such file or folder", code: "E_NOT_FOUND" },
  ];

  it("prints file:line:col: message, one per line", () => {
    expect(formatProblems(problems, { color: false, codeFrame: false })).toBe(
      'a.yaml:2:5: unknown field "x"\ngone.yaml: no such file or folder',
    );
  });

  it("draws a code frame from the given sources, with colour on request", () => {
    const sources = new Map([["a.yaml", "version: 1\nvideos:\n  - x: 1\n"]]);
    expect(formatProblems(problems.slice(0, 1), { color: false, codeFrame: true, sources })).toBe(
      [
        'a.yaml:2:5: unknown field "x"',
        "  1 | version: 1",
        "> 2 | videos:",
        "    |     ^",
        "  3 |   - x: 1",
        "",
      ].join("\n"),
    );
    expect(formatProblems(problems.slice(0, 1), { color: true, codeFrame: false })).toContain(
      "\u001b[1ma.yaml:2:5\u001b[22m",
    );
  });
});
