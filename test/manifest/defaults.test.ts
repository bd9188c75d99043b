// Defaults: `defaults` takes every video field, chunks included (the chunks of every
// video that gives none, checked against each video's own model, problems placed at the defaults'
// line with the video named, once), and a video clears an inherited field with null. Real files in a
// temp folder.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

async function load(lines: string[]) {
  await ws.write("promo.yaml", lines.join("\n"));
  return loadManifests(["promo.yaml"], { cwd: ws.dir });
}

const shown = (problems: { line: number; col: number; message: string }[]) =>
  problems.map((p) => `${p.line}:${p.col}: ${p.message}`);

describe("defaults", () => {
  it("gives its chunks to every video without its own; a video's own chunks win", async () => {
    const { manifests, problems } = await load([
      "version: 1",
      "defaults:",
      "  model: actor-2",
      "  chunks: [{ duration: 5, text: waves hello }]",
      "videos:",
      "  - id: a",
      "  - id: b",
      "    resolution: 1080p",
      "  - id: c",
      "    chunks: [{ duration: 10, text: bows }]",
    ]);
    expect(problems).toEqual([]);
    const jobs = manifests[0]!.jobs;
    expect(jobs.map((j) => [j.id, j.seconds, j.spec.chunks[0]!.text])).toEqual([
      ["a", 5, "waves hello"],
      ["b", 5, "waves hello"],
      ["c", 10, "bows"],
    ]);
  });

  it("checks the default chunks against each video's model, at the defaults' line, naming the video once", async () => {
    const { problems } = await load([
      "version: 1",
      "defaults:",
      "  chunks:",
      "    - duration: 12",
      "      text: smiles",
      "videos:",
      "  - id: a",
      "    model: actor-2",
      "  - id: b",
      "    model: actor-2",
      "  - id: c",
      "    model: avatar-h1",
      "    source: ./media/face.png",
    ]);
    // a and b break the same rule at the same place: said once, for the first.
    expect(shown(problems)).toEqual([
      "4:7: c: avatar-h1 needs an audio or speech in every chunk",
      "4:17: a: actor-2 takes chunks of 5 or 10 seconds, not 12",
    ]);
  });

  it("fills a matrix video with the default chunks, placeholders and all", async () => {
    const { manifests, problems } = await load([
      "version: 1",
      "defaults:",
      "  model: avatar-h1",
      "  resolution: 540p",
      "  source: ./media/face.png",
      '  chunks: [{ duration: 4, speech: { voice: "{voice}", text: "{line}" } }]',
      "videos:",
      "  - id: promo-{lang}",
      '    matrix: { lang: [{ lang: en, voice: 17, line: "Hello" }, { lang: de, voice: 18, line: "Hallo" }] }',
    ]);
    expect(problems).toEqual([]);
    expect(manifests[0]!.jobs.map((j) => j.spec.chunks[0]!.audio)).toEqual([
      { kind: "speech", voiceId: "17", text: "Hello" },
      { kind: "speech", voiceId: "18", text: "Hallo" },
    ]);
  });

  it("lets a video clear an inherited field with null: source, resolution, seed, takes", async () => {
    const { manifests, problems } = await load([
      "version: 1",
      "defaults:",
      "  model: avatar-h1",
      "  resolution: 540p",
      "  seed: 7",
      "  takes: 2",
      "  source: ./media/face.png",
      "  chunks: [{ duration: 4, text: talks, audio: ./media/intro.mp3 }]",
      "videos:",
      "  - id: talk",
      "  - id: plain",
      "    model: actor-2",
      "    source: null",
      "    resolution: null",
      "    seed: null",
      "    takes: null",
      "    chunks: [{ duration: 5, text: waves }]",
    ]);
    expect(problems).toEqual([]);
    const jobs = manifests[0]!.jobs;
    expect(jobs.map((j) => j.id)).toEqual(["talk~1", "talk~2", "plain"]);
    expect(jobs[0]!.spec).toMatchObject({ resolution: "540p", seed: 7, source: { kind: "file" } });
    // actor-2 does not take 540p: cleared, the service picks; no image, no seed, one job.
    expect(jobs[2]!.spec).toEqual({ model: "actor-2", chunks: [{ duration: 5, text: "waves" }] });
  });

  it("refuses to clear a source the model needs, at the video's line", async () => {
    const { problems } = await load([
      "version: 1",
      "defaults: { model: avatar-h1, source: ./media/face.png }",
      "videos:",
      "  - id: talk",
      "    source: null",
      "    chunks: [{ duration: 4, audio: ./media/intro.mp3 }]",
    ]);
    expect(shown(problems)).toEqual([
      "5:13: avatar-h1 needs a source image: source: null clears the default; give this video its own (a local path, an https URL or {asset: ID})",
    ]);
  });
});
