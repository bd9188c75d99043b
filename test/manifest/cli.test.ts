import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/command.js";
import { main } from "../../src/cli/main.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function reel(cwd: string, ...argv: string[]): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => {
    out += String(d);
  });
  stderr.on("data", (d) => {
    err += String(d);
  });
  const io: CliIO = { stdout, stderr, env: {}, cwd, signal: new AbortController().signal };
  const code = await main(argv, io);
  return { code, stdout: out, stderr: err };
}

const GOOD =
  "version: 1\nvideos:\n  - id: a\n    model: actor-2\n    chunks:\n      - duration: 10\n        text: hi\n";
const BAD =
  "version: 1\nvideos:\n  - id: a\n    model: actor-2\n    resolution: 540p\n    chunks:\n      - duration: 10\n        text: hi\n";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
  // The examples run in a temp folder, never in the repository: `npm run demo` leaves a state file
  // in the repository's .reel/, and a plan read there would show the demo's jobs done.
  await ws.copyExamples();
});
afterEach(async () => {
  await ws.cleanup();
});

describe("reel validate", () => {
  it("exits 0 with a summary line on valid manifests", async () => {
    const run = await reel(ws.dir, "validate", "manifests");
    expect(run).toEqual({ code: 0, stdout: "5 manifests, 35 videos, 315 s of video: ok\n", stderr: "" });
  });

  it("exits 2 and prints every problem as file:line:col: message", async () => {
    await ws.write("good.yaml", GOOD);
    await ws.write("bad.yaml", BAD);
    await ws.write("ugly.yaml", "version: 1\nvideos: {}\n");
    const run = await reel(ws.dir, "validate", ".");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      [
        "bad.yaml:5:17: actor-2 takes resolution 720p or 1080p, not 540p",
        "ugly.yaml:2:9: videos must be a list of videos, not a mapping",
        "reel validate: 2 problems in 2 files",
        "",
      ].join("\n"),
    );
  });

  it("--json prints {ok, problems, warnings, summary} on stdout", async () => {
    await ws.write("bad.yaml", BAD);
    const run = await reel(ws.dir, "validate", "--json", "bad.yaml");
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({
      ok: false,
      problems: [
        {
          file: "bad.yaml",
          line: 5,
          col: 17,
          code: "E_MODEL_RULE",
          message: "actor-2 takes resolution 720p or 1080p, not 540p",
        },
      ],
      warnings: [],
      summary: { manifests: 0, videos: 0, seconds: 0 },
    });
    const ok = await reel(ws.dir, "validate", "--json", "manifests/actor.yaml");
    expect(JSON.parse(ok.stdout)).toEqual({
      ok: true,
      problems: [],
      warnings: [],
      summary: { manifests: 1, videos: 4, seconds: 35 },
    });
  });

  it("--allow-read lets a manifest read outside the folder", async () => {
    await ws.write(
      "m.yaml",
      `version: 1\nvideos:\n  - id: a\n    model: avatar-h1\n    source: ${ws.outside}/secret.png\n    chunks:\n      - duration: 5\n        audio: ./media/intro.mp3\n`,
    );
    expect((await reel(ws.dir, "validate", "m.yaml")).code).toBe(2);
    expect((await reel(ws.dir, "validate", "--allow-read", ws.outside, "m.yaml")).code).toBe(0);
  });

  it("says an --allow-read folder that does not exist is a mistake in the command, not in a manifest", async () => {
    await ws.write("m.yaml", "version: 1\nvideos: []\n");
    const result = await reel(ws.dir, "validate", "--allow-read", "nowhere", "m.yaml");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--allow-read nowhere: no such folder");
    expect(result.stderr).not.toMatch(/problems? in/);
  });

  it("exits 2 on usage errors", async () => {
    expect((await reel(ws.dir, "validate")).code).toBe(2);
    expect((await reel(ws.dir, "validate", "--bogus", "x")).code).toBe(2);
    const missing = await reel(ws.dir, "validate", "nope.yaml");
    expect(missing).toMatchObject({
      code: 2,
      stderr: "nope.yaml: no such file or folder\nreel validate: 1 problem in 1 file\n",
    });
  });
});

describe("reel plan", () => {
  it("prints jobs, uploads, speech and seconds per model", async () => {
    const run = await reel(ws.dir, "plan", "manifests/mixed.yaml");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        // Which state it compared with, and why that one: here none, no project above the manifests.
        "state .reel/state.db · out out · new: no project or state above",
        "1 manifest, 5 videos, 72 s of video: ok",
        "compared with: nothing (no state file yet): every job is new",
        "",
        "jobs       5 new, 0 done, 0 in flight, 0 failed, 0 uncertain",
        "uploads    4 to upload (12.1 KB), 0 already uploaded",
        "speech     2 to generate, 0 already made",
        "",
        "seconds of video per model",
        "  model            videos   seconds     new",
        "  actor-1               1         5       5",
        "  actor-2               1        15      15",
        "  actor-4               1         5       5",
        "  avatar-h1             1        32      32",
        "  avatar-h1-pro         1        15      15",
        "  total                 5        72      72",
        "",
        "spend per manifest (seconds of video; no price list: see --prices)",
        "                             seconds of video",
        "  manifest          jobs    new  retry   paid",
        "  spring-campaign      5     72      0      0",
        "  total                5     72      0      0",
        "",
        "to submit:",
        "  spring-campaign/intro",
        "  spring-campaign/host",
        "  spring-campaign/storefront",
        "  spring-campaign/runway",
        "  spring-campaign/social-teaser",
        "",
      ].join("\n"),
    );
  });

  it("--only selects jobs by manifest/id; --json prints the plan", async () => {
    const run = await reel(
      ws.dir,
      "plan",
      "--json",
      "--only",
      "spring-campaign/intro",
      "--only",
      "runway",
      "manifests",
    );
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.ok).toBe(true);
    expect(out.plan.jobs.new).toEqual(["spring-campaign/intro", "spring-campaign/runway"]);
    expect(out.summary).toEqual({ manifests: 1, videos: 2, seconds: 47 });
    expect((await reel(ws.dir, "plan", "--only", "nothing/*", "manifests")).code).toBe(2);
    // A script that asked for JSON gets JSON when it fails too.
    const refused = await reel(ws.dir, "plan", "--json", "--only", "nothing/*", "manifests");
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toEqual({
      ok: false,
      error: { code: "E_USAGE", message: "--only nothing/* matches no job (jobs are named manifest/id)" },
    });
  });

  it("checks a base URL as run does, rather than showing every job new against a mistyped one", async () => {
    await ws.write("good.yaml", GOOD);
    const v1 = await reel(ws.dir, "plan", "good.yaml", "--base-url", "https://api.example.com/v1");
    expect(v1.code).toBe(2);
    expect(v1.stderr).toContain("--base-url should not end with /v1");
    const plain = await reel(ws.dir, "plan", "good.yaml", "--base-url", "http://api.example.com");
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("--base-url must be https");
    const both = await reel(
      ws.dir,
      "plan",
      "good.yaml",
      "--sandbox",
      "--base-url",
      "https://api.example.com",
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("exclude each other");
  });

  it("exits 2 on invalid manifests, without a plan", async () => {
    await ws.write("bad.yaml", BAD);
    const run = await reel(ws.dir, "plan", "bad.yaml");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("bad.yaml:5:17: actor-2 takes resolution 720p or 1080p, not 540p");
  });
});
