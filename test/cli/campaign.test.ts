// Campaigns, from real runs against the sandbox over HTTP: `reel plan --explain` (for each
// job a run would submit, why: a new id, a changed text / resolution / source content with the fields
// named, an uncertain job with --resubmit-uncertain; --json carries the same), and a matrix with
// takes run for real.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { diffSpecs } from "../../src/manifest/index.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

function manifest(text: string, resolution = "720p", extra = ""): string {
  return [
    "version: 1",
    "name: promo",
    `defaults: { model: avatar-h1, resolution: 540p }`,
    "videos:",
    "  - id: intro",
    "    model: actor-2",
    `    resolution: ${resolution}`,
    "    chunks:",
    `      - { duration: 5, text: "${text}" }`,
    "  - id: face",
    "    source: ./face.png",
    "    chunks:",
    '      - { duration: 5, speech: { voice: 17, text: "Hello" } }',
    extra,
  ].join("\n");
}

interface Explained {
  key: string;
  reasons: { code: string; text: string; changes?: string[] }[];
}

describe("reel plan --explain", () => {
  it("names why each job would be submitted: new, or the fields changed since its last version", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("waves"), "face.png": { fixture: "tiny.png" } });
    const before = await runCli(["plan", "--explain", "promo.yaml"], { cwd: dir, env: env(s) });
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain("promo/intro: new: no state to compare with");

    expect((await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    // The text and the resolution edited, the face's picture replaced by another of the same name,
    // and a new video.
    await writeFile(
      join(dir, "promo.yaml"),
      manifest(
        "waves hello",
        "1080p",
        "  - id: outro\n    model: actor-2\n    resolution: 720p\n    chunks: [{ duration: 5, text: bye }]\n",
      ),
    );
    await writeTree(dir, { "face.png": { fixture: "tiny.jpg" } });
    const plan = await runCli(["plan", "--explain", "promo.yaml"], { cwd: dir, env: env(s) });
    expect(plan.code, plan.stderr).toBe(0);
    const why = plan.stdout.slice(plan.stdout.indexOf("why ("));
    expect(why).toBe(
      [
        "why (3 to submit):",
        "  promo/intro: changed since its last version:",
        "      resolution 720p -> 1080p",
        '      chunks[0].text "waves" -> "waves hello"',
        "  promo/face: changed since its last version:",
        "      source: face.png content changed",
        "  promo/outro: new: no version of this job was run before",
        "",
      ].join("\n"),
    );

    const json = await runCli(["plan", "--explain", "--json", "--only", "promo/intro", "promo.yaml"], {
      cwd: dir,
      env: env(s),
    });
    const explained = (JSON.parse(json.stdout) as { explain: Explained[] }).explain;
    expect(explained).toEqual([
      {
        key: "promo/intro",
        reasons: [
          expect.objectContaining({
            code: "CHANGED",
            changes: ["resolution 720p -> 1080p", 'chunks[0].text "waves" -> "waves hello"'],
          }),
        ],
      },
    ]);
  });

  it("lists an uncertain job only with --resubmit-uncertain, saying so", async () => {
    const s = await sandbox({ faults: { rate500AfterEffect: 1, routes: ["POST /v1/generations"] } });
    const dir = await tempDir();
    await writeTree(dir, {
      "promo.yaml":
        "version: 1\nname: promo\nvideos:\n  - id: intro\n    model: actor-2\n    chunks: [{ duration: 5, text: hi }]\n",
    });
    expect((await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    const plain = await runCli(["plan", "--explain", "promo.yaml"], { cwd: dir, env: env(s) });
    expect(plain.stdout).toContain("why (0 to submit):\n  nothing to submit\n");
    const asked = await runCli(["plan", "--explain", "--resubmit-uncertain", "promo.yaml"], {
      cwd: dir,
      env: env(s),
    });
    expect(asked.stdout).toContain(
      "promo/intro: its submission's outcome is unknown (it may have been made), and --resubmit-uncertain",
    );
    expect(s.counters.generationsCreated).toBe(1);
  });
});

describe("diffSpecs", () => {
  it("names a file whose content changed under the same path, and speech by voice and text", () => {
    const cwd = "/p";
    const file = (sha256: string) => ({
      kind: "file",
      path: "/p/faces/anna.png",
      sha256,
      size: 1,
      format: "png",
    });
    expect(
      diffSpecs(
        {
          model: "avatar-h1",
          source: file("a"),
          chunks: [{ duration: 5, audio: { kind: "speech", voiceId: "17", text: "Hi" } }],
        },
        {
          model: "avatar-h1",
          source: file("b"),
          chunks: [{ duration: 8, audio: { kind: "speech", voiceId: "18", text: "Hi" } }],
        },
        cwd,
      ),
    ).toEqual([
      "source: faces/anna.png content changed",
      "chunks[0].duration 5 -> 8",
      "chunks[0].speech.voice 17 -> 18",
    ]);
    // The same content under another name is the same request: nothing to say.
    expect(diffSpecs({ source: file("a") }, { source: { ...file("a"), path: "/q/b.png" } }, cwd)).toEqual([]);
    expect(diffSpecs({ seed: 7, chunks: [{}] }, { chunks: [{}, {}] }, cwd)).toEqual([
      "seed 7 -> (none)",
      "chunks: 1 -> 2 items",
    ]);
  });
});

describe("a campaign with a matrix and takes, run for real", () => {
  it("makes one job per combination and take, a line each in results.jsonl and a file each; a rerun with more takes adds only those", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const campaign = (takes: number) =>
      [
        "version: 1",
        "name: summer",
        "defaults: { model: avatar-h1, resolution: 540p }",
        "videos:",
        "  - id: s-{lang}-{face}",
        "    matrix:",
        '      lang: [{ lang: en, voice: 17, line: "Summer is here." }, { lang: de, voice: 18, line: "Der Sommer ist da." }]',
        "      face: [face]",
        "    source: ./{face}.png",
        `    takes: ${takes}`,
        "    chunks:",
        '      - { duration: 5, speech: { voice: "{voice}", text: "{line}" } }',
      ].join("\n");
    await writeTree(dir, { "summer.yaml": campaign(2), "face.png": { fixture: "tiny.png" } });
    const first = await runCli(["run", "summer.yaml"], { cwd: dir, env: env(s) });
    expect(first.code, first.stderr).toBe(0);
    const results = await readResults<{ id: string; status: string; file: string }>(dir);
    expect(results.map((r) => [r.id, r.status, r.file])).toEqual(
      ["s-en-face~1", "s-en-face~2", "s-de-face~1", "s-de-face~2"].map((id) => [
        id,
        "Success",
        `summer/${id}.mp4`,
      ]),
    );
    expect(s.counters.generationsCreated).toBe(4);
    expect(s.counters.speechByInput.size).toBe(2);

    await writeTree(dir, { "summer.yaml": campaign(3) });
    const more = await runCli(["run", "summer.yaml"], { cwd: dir, env: env(s) });
    expect(more.code, more.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect((await readResults<{ id: string }>(dir)).map((r) => r.id)).toContain("s-de-face~3");
  });
});
