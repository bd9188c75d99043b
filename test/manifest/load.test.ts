import { execFileSync } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatProblems, loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, REPO, type Workspace } from "./helpers.js";

const actor = (id: string, extra = "") =>
  `  - id: ${id}\n    model: actor-2\n${extra}    chunks:\n      - duration: 5\n        text: hi\n`;
const manifest = (videos: string, head = "") => `version: 1\n${head}videos:\n${videos}`;

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

describe("loadManifests", () => {
  it("loads the examples in manifests/ without a problem", async () => {
    const { manifests, problems } = await loadManifests(["manifests"], { cwd: REPO });
    expect(problems).toEqual([]);
    expect(manifests.map((m) => [m.name, m.file])).toEqual([
      ["actor-examples", "manifests/actor.yaml"],
      ["avatar-examples", "manifests/avatar.yaml"],
      ["summer-campaign", "manifests/campaign.yaml"],
      ["spring-campaign", "manifests/mixed.yaml"],
      ["welcome", "manifests/welcome.yaml"],
    ]);
    for (const file of ["actor.yaml", "avatar.yaml", "campaign.yaml", "mixed.yaml", "welcome.yaml"]) {
      const text = await readFile(path.join(REPO, "manifests", file), "utf8");
      expect(text.startsWith("# yaml-language-server: $schema=../schemas/manifest.schema.json\n")).toBe(true);
    }
    const mixed = manifests.find((m) => m.name === "spring-campaign")!;
    expect(new Set(mixed.jobs.map((j) => j.model)).size).toBe(5);
    const refs = mixed.jobs.flatMap((j) => [j.spec.source, ...j.spec.chunks.map((c) => c.audio)]);
    const formats = new Set(refs.map((r) => (r?.kind === "file" ? r.format : r?.kind)));
    for (const kind of ["png", "jpeg", "wav", "mp3", "speech"]) expect(formats).toContain(kind);
  });

  it("normalizes a video into a job: defaults merged, assets by content, position and seconds", async () => {
    await ws.write(
      "spring.yaml",
      [
        "version: 1",
        "defaults:",
        "  model: avatar-h1",
        "  resolution: 540p",
        "  source: ./media/face.png",
        "  seed: 3",
        "videos:",
        "  - id: intro",
        '    aspectRatio: "1:1"',
        "    chunks:",
        "      - duration: 20",
        "        text: smiles",
        "        audio: ./media/greeting.wav",
        "      - duration: 12",
        '        speech: { voice: "0017", text: Welcome. }',
        "        enablePromptEnhancement: false",
        "  - id: other",
        "    model: avatar-h1-pro",
        "    resolution: 720p",
        "    source: { asset: 1800000000000000001 }",
        "    chunks:",
        "      - duration: 5",
        "        audio: https://example.com/a.mp3",
        "",
      ].join("\n"),
    );
    const { manifests, problems } = await loadManifests(["spring.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([]);
    const [m] = manifests;
    expect(m?.name).toBe("spring");
    const [intro, other] = m!.jobs;
    expect(intro).toMatchObject({
      manifest: "spring",
      id: "intro",
      key: "spring/intro",
      model: "avatar-h1",
      seconds: 32,
    });
    expect([intro?.line, intro?.col]).toEqual([8, 5]);
    expect(intro?.spec).toEqual({
      model: "avatar-h1",
      resolution: "540p",
      aspectRatio: "1:1",
      seed: 3,
      source: {
        kind: "file",
        path: path.join(ws.dir, "media", "face.png"),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        size: 552,
        format: "png",
        // The file that was checked, which the upload must find again.
        stamp: expect.objectContaining({ size: 552, ino: expect.stringMatching(/^\d+$/) }),
      },
      chunks: [
        {
          duration: 20,
          text: "smiles",
          audio: expect.objectContaining({
            kind: "file",
            format: "wav",
            path: path.join(ws.dir, "media", "greeting.wav"),
          }),
        },
        {
          duration: 12,
          audio: { kind: "speech", voiceId: "17", text: "Welcome." },
          enablePromptEnhancement: false,
        },
      ],
    });
    expect(other?.spec).toEqual({
      model: "avatar-h1-pro",
      resolution: "720p",
      seed: 3,
      source: { kind: "asset", id: "1800000000000000001" },
      chunks: [{ duration: 5, audio: { kind: "url", url: "https://example.com/a.mp3", use: "audio" } }],
    });
    expect(intro?.specHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("places problems on their own line in a file whose lines end with a lone CR (old Mac style)", async () => {
    const lines = ["version: 1", "videos:", "  - id: a", "    model: actor-2", "    resolution: 720p"];
    await ws.write(
      "cr.yaml",
      [...lines, "    chunks:", "      - duration: 7", "        text: hi", ""].join("\r"),
    );
    const { problems } = await loadManifests(["cr.yaml"], { cwd: ws.dir });
    expect(problems).toMatchObject([{ line: 7, col: 19, message: expect.stringMatching(/not 7/) }]);
  });

  it("reads an https URL written in capitals as the same URL (schemes and hosts have no case)", async () => {
    const chunk = (url: string) =>
      `    model: actor-2\n    resolution: 720p\n    source: ${url}\n    chunks: [{duration: 5, text: hi}]\n`;
    await ws.write(
      "urls.yaml",
      manifest(
        `  - id: a\n${chunk("HTTPS://Example.COM/face.png")}  - id: b\n${chunk("https://example.com/face.png")}`,
      ),
    );
    const { manifests, problems } = await loadManifests(["urls.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([]);
    const [a, b] = manifests[0]!.jobs;
    expect(a?.spec.source).toEqual({ kind: "url", url: "https://example.com/face.png", use: "image" });
    expect(a?.specHash).toBe(b?.specHash);
  });

  it("searches folders recursively for *.yaml and *.yml, sorted, skipping hidden entries", async () => {
    await ws.write("m/b.yaml", manifest(actor("x")));
    await ws.write("m/a.yml", manifest(actor("x")));
    await ws.write("m/sub/c.yaml", manifest(actor("x")));
    await ws.write("m/.hidden/d.yaml", manifest(actor("x")));
    await ws.write("m/notes.txt", "not a manifest");
    const { manifests, problems } = await loadManifests(["m", "m/b.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([]);
    expect(manifests.map((m) => m.file)).toEqual(["m/a.yml", "m/b.yaml", "m/sub/c.yaml"]);
  });

  it("reads a manifest once when a link to it sits beside it, so its videos are not run twice", async () => {
    await ws.write("m/good.yaml", manifest(actor("x"))); // no name: it would come from the file name
    await symlink(path.join(ws.dir, "m", "good.yaml"), path.join(ws.dir, "m", "alias.yaml"));
    const { manifests, problems } = await loadManifests(["m"], { cwd: ws.dir });
    expect(problems).toEqual([]);
    expect(manifests.map((m) => m.name)).toEqual(["good"]);
  });

  it("reports a folder with no manifest in it (a mistyped path), rather than running nothing", async () => {
    await ws.write("empty/notes.txt", "not a manifest");
    const { manifests, problems } = await loadManifests(["empty"], { cwd: ws.dir });
    expect(manifests).toEqual([]);
    expect(problems).toEqual([
      expect.objectContaining({
        file: "empty",
        code: "E_NOT_FOUND",
        message: expect.stringMatching(/no manifest/),
      }),
    ]);
  });

  it("quotes a long bad value in part, saying how long it is", async () => {
    await ws.write("a.yaml", manifest(actor("x", `    resolution: ${"x".repeat(5_000)}\n`)));
    const { problems } = await loadManifests(["a.yaml"], { cwd: ws.dir });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toContain(`"${"x".repeat(60)}"... (5000 characters)`);
    expect(problems[0]!.message.length).toBeLessThan(300);
  });

  it("reports every problem of every file at once, and still loads the valid files", async () => {
    await ws.write("a.yaml", manifest(actor("x", "    resolution: 540p\n")));
    await ws.write("b.yaml", manifest(actor("y")));
    await ws.write("c.yaml", "version: 1\nvideos: [\n");
    const { manifests, problems } = await loadManifests(["a.yaml", "b.yaml", "c.yaml", "nope.yaml"], {
      cwd: ws.dir,
    });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.code}`)).toEqual([
      "nope.yaml:0:0 E_NOT_FOUND",
      "a.yaml:5:17 E_MODEL_RULE",
      "c.yaml:2:9 E_YAML_SYNTAX",
    ]);
    expect(manifests.map((m) => m.name)).toEqual(["b"]);
  });

  it("keeps the text of files with problems, so a code frame needs no second read", async () => {
    await ws.write("a.yaml", manifest(actor("x", "    resolution: 540p\n")));
    const { problems } = await loadManifests(["a.yaml"], { cwd: ws.dir });
    expect(formatProblems(problems, { color: false, codeFrame: true })).toBe(
      [
        "a.yaml:5:17: actor-2 takes resolution 720p or 1080p, not 540p",
        "  4 |     model: actor-2",
        "> 5 |     resolution: 540p",
        "    |                 ^",
        "  6 |     chunks:",
        "",
      ].join("\n"),
    );
  });

  it("refuses the same manifest name twice in a run, whatever the case", async () => {
    await ws.write("one.yaml", manifest(actor("x"), "name: Spring\n"));
    await ws.write("two.yaml", manifest(actor("x"), "name: spring\n"));
    await ws.write("spring.yaml", manifest(actor("x")));
    const { problems } = await loadManifests(["one.yaml", "two.yaml", "spring.yaml"], { cwd: ws.dir });
    expect(problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.message}`)).toEqual([
      'two.yaml:2:7 manifest name "spring" is already used by one.yaml; names must be unique in a run (they name the output folders)',
      'spring.yaml:1:1 manifest name "spring" is already used by one.yaml; names must be unique in a run (they name the output folders)',
    ]);
  });

  it("needs a name when the file name is not a safe one", async () => {
    await ws.write("my campaign.yaml", manifest(actor("x")));
    const { problems } = await loadManifests(["my campaign.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([
      {
        file: "my campaign.yaml",
        line: 1,
        col: 1,
        code: "E_UNSAFE_NAME",
        message:
          "this manifest has no name and its file name \"my campaign\" can't be one (letters, digits, '.', '_', '-'); add name: to the manifest",
      },
    ]);
  });

  it("refuses a file over the size limit before parsing it", async () => {
    await ws.write("big.yaml", `${manifest(actor("x"))}# ${"x".repeat(2000)}\n`);
    const { problems } = await loadManifests(["big.yaml"], { cwd: ws.dir, maxFileBytes: 1000 });
    expect(problems).toEqual([
      expect.objectContaining({
        line: 1,
        col: 1,
        code: "E_FILE_TOO_LARGE",
        message: expect.stringMatching(/at most 1000 bytes/),
      }),
    ]);
  });

  it.skipIf(process.platform === "win32")(
    "refuses a named pipe given as a manifest instead of waiting on it for ever",
    async () => {
      execFileSync("mkfifo", [path.join(ws.dir, "pipe.yaml")]);
      const { problems } = await loadManifests(["pipe.yaml"], { cwd: ws.dir });
      expect(problems).toEqual([
        expect.objectContaining({ code: "E_READ", message: expect.stringMatching(/not a regular file/) }),
      ]);
    },
  );

  it("refuses an alias bomb quickly", async () => {
    const lines = ["version: 1", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    const names = "abcdefghijklmnop";
    for (let i = 1; i < names.length; i++) {
      lines.push(
        `${names[i]}: &${names[i]} [${Array(10)
          .fill(`*${names[i - 1]}`)
          .join(",")}]`,
      );
    }
    lines.push("videos: *p");
    await ws.write("bomb.yaml", `${lines.join("\n")}\n`);
    const started = performance.now();
    const { problems } = await loadManifests(["bomb.yaml"], { cwd: ws.dir });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(problems.map((p) => p.code)).toEqual(["E_ALIAS_LIMIT"]);
  });

  it("accepts ordinary alias reuse", async () => {
    const videos = Array.from(
      { length: 50 },
      (_, i) => `  - id: v${i}\n    model: actor-2\n    chunks: *chunks\n`,
    );
    await ws.write(
      "reuse.yaml",
      `version: 1\nvideos:\n  - id: v0\n    model: actor-2\n    chunks: &chunks\n      - duration: 5\n        text: hi\n${videos.slice(1).join("")}`,
    );
    const { manifests, problems } = await loadManifests(["reuse.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([]);
    expect(manifests[0]?.jobs).toHaveLength(50);
  });

  it("reads outside the folder only under --allow-read, and follows symlinks that stay inside", async () => {
    const video = (source: string) =>
      manifest(
        `  - id: x\n    model: avatar-h1\n    source: ${source}\n    chunks:\n      - duration: 5\n        audio: ./media/intro.mp3\n`,
      );
    await ws.write("outside.yaml", video(path.join(ws.outside, "secret.png")));
    await ws.write("link.yaml", video("./media/outside.png"));
    await symlink(path.join(ws.dir, "media", "face.png"), path.join(ws.dir, "face-link.png"));
    await ws.write("inside.yaml", video("./face-link.png"));

    const refused = await loadManifests(["outside.yaml", "link.yaml", "inside.yaml"], { cwd: ws.dir });
    expect(refused.problems.map((p) => `${p.file} ${p.code}`)).toEqual([
      "outside.yaml E_PATH_OUTSIDE",
      "link.yaml E_PATH_OUTSIDE",
    ]);

    const allowed = await loadManifests(["outside.yaml", "link.yaml", "inside.yaml"], {
      cwd: ws.dir,
      allowRead: [ws.outside],
    });
    expect(allowed.problems).toEqual([]);
    const sources = allowed.manifests.map((m) => m.jobs[0]?.spec.source);
    expect(sources.map((s) => (s?.kind === "file" ? s.path : undefined))).toEqual([
      path.join(ws.outside, "secret.png"),
      path.join(ws.outside, "secret.png"),
      path.join(ws.dir, "media", "face.png"),
    ]);
  });

  it("lets an --allow-read folder that no longer exists allow nothing (the CLI refuses a missing one at start)", async () => {
    await ws.write("a.yaml", manifest(actor("x", `    source: ${path.join(ws.outside, "secret.png")}\n`)));
    const { problems } = await loadManifests(["a.yaml"], { cwd: ws.dir, allowRead: ["nowhere"] });
    expect(problems).toMatchObject([
      { file: "a.yaml", message: expect.stringMatching(/outside the folder/) },
    ]);
  });

  it("hashes each distinct file once, through the given hashFile", async () => {
    const videos = Array.from(
      { length: 30 },
      (_, i) =>
        `  - id: v${i}\n    model: avatar-h1\n    source: ${i % 2 ? "../media/face.png" : "../media/../media/face.png"}\n    chunks:\n      - duration: 5\n        audio: ../media/intro.mp3\n`,
    );
    await mkdir(path.join(ws.dir, "sub"));
    await ws.write("sub/many.yaml", manifest(videos.join("")));
    const calls: string[] = [];
    const { problems, manifests } = await loadManifests(["sub"], {
      cwd: ws.dir,
      hashFile: async (abs) => {
        calls.push(abs);
        return "ab".repeat(32);
      },
    });
    expect(problems).toEqual([]);
    expect(manifests[0]?.jobs).toHaveLength(30);
    expect(calls.sort()).toEqual([
      path.join(ws.dir, "media", "face.png"),
      path.join(ws.dir, "media", "intro.mp3"),
    ]);
  });

  it("keeps int64 ids exact", async () => {
    await writeFile(
      path.join(ws.dir, "ids.yaml"),
      manifest(
        "  - id: x\n    model: avatar-h1\n    source: { asset: 9223372036854775807 }\n    chunks:\n      - duration: 5\n        speech: { voice: 1800000000000000003, text: hi }\n",
      ),
    );
    const { manifests, problems } = await loadManifests(["ids.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([]);
    const spec = manifests[0]?.jobs[0]?.spec;
    expect(spec?.source).toEqual({ kind: "asset", id: "9223372036854775807" });
    expect(spec?.chunks[0]?.audio).toEqual({ kind: "speech", voiceId: "1800000000000000003", text: "hi" });
  });
});
