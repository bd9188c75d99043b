// The number of videos a manifest (and a run) makes is capped, and counted before any matrix is
// expanded: a few kilobytes of YAML can stand for millions of videos, and expanding them first
// would take minutes and gigabytes before the refusal (or stall a watcher). The refusal names the
// total, the limit and how to raise it, at the template that passes the limit.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { DEFAULTS } from "../../src/defaults.js";
import { runCli, until, useCommands, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
// Stopped after each test, before the sandboxes close.
const startCommand = useCommands();

/** `n` templates, each the cross product of two lists of `size` (size x size videos each). */
function matrixManifest(name: string, n: number, size: number, extra = ""): string {
  const list = (p: string) => `[${Array.from({ length: size }, (_, i) => `${p}${i}`).join(", ")}]`;
  let text = `version: 1\nname: ${name}\ndefaults: { model: actor-2, resolution: 720p }\nvideos:\n`;
  for (let t = 0; t < n; t++)
    text += `  - id: p${t}-{a}-{b}\n    matrix:\n      a: ${list("a")}\n      b: ${list("b")}\n${extra}    chunks:\n      - duration: 5\n        text: "{a} and {b}"\n`;
  return text;
}

/** The line of the template whose id starts `p<t>-`. */
const lineOf = (text: string, t: number): number =>
  text.split("\n").findIndex((line) => line.startsWith(`  - id: p${t}-`)) + 1;

it("a manifest of 600,000 videos is refused by validate, plan and run before it is expanded: the total, the limit and the flag at the template that passes it, exit 2, nothing sent", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  const text = matrixManifest("big", 60, 100); // 60 x 100 x 100, about 70 KB
  await writeFile(join(dir, "big.yaml"), text);
  const limit = DEFAULTS.maxVideos;
  // Each template makes 10,000: the one that passes the limit is the (limit / 10,000 + 1)th.
  const line = lineOf(text, limit / 10_000);
  const said = new RegExp(
    `big\\.yaml:${line}:5: this manifest makes 600000 videos .*limit of ${limit} per manifest.*--max-videos 600000`,
  );
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };

  for (const command of [["validate"], ["plan"], ["run"]]) {
    const result = await runCli([...command, "big.yaml"], { cwd: dir, env });
    expect(result.code, `${command[0]}: ${result.stderr}`).toBe(2);
    expect(result.stderr).toMatch(said);
    expect(result.stderr.match(/this manifest makes/g)).toHaveLength(1);
  }
  expect(s.counters.requests.size).toBe(0);
  expect(existsSync(join(dir, ".reel", "state.db"))).toBe(false);
});

it("--max-videos, REEL_MAX_VIDEOS and reel.yaml's maxVideos set the limit, which counts excluded combinations out and takes in", async () => {
  const dir = await tempDir();
  // 2 templates of 10 x 10, less the 10 with a0, times 3 takes: 2 x 90 x 3 = 540 videos.
  const text = matrixManifest("m", 2, 10, "    takes: 3\n").replace(
    /( {6}b: \[[^\]]*\]\n)/g,
    "$1      exclude: [{ a: a0 }]\n",
  );
  await writeTree(dir, { "m.yaml": text });

  const ok = await runCli(["validate", "--max-videos", "540", "m.yaml"], { cwd: dir });
  expect(ok.stderr).toBe("");
  expect(ok.stdout).toContain("540 videos");
  expect(ok.code).toBe(0);

  const over = await runCli(["validate", "--max-videos", "539", "m.yaml"], { cwd: dir });
  expect(over.code).toBe(2);
  // The first template makes 270: the second passes the limit.
  expect(over.stderr).toMatch(
    new RegExp(`m\\.yaml:${lineOf(text, 1)}:5: this manifest makes 540 videos .*limit of 539 per manifest`),
  );

  const byEnv = await runCli(["plan", "m.yaml"], { cwd: dir, env: { REEL_MAX_VIDEOS: "100" } });
  expect(byEnv.code).toBe(2);
  expect(byEnv.stderr).toMatch(
    new RegExp(`m\\.yaml:${lineOf(text, 0)}:5: this manifest makes 540 videos .*limit of 100 per manifest`),
  );

  await writeTree(dir, { "reel.yaml": "version: 1\nmaxVideos: 500\n" });
  for (const command of ["validate", "plan"]) {
    const project = await runCli([command, "m.yaml"], { cwd: dir });
    expect(project.code, command).toBe(2);
    expect(project.stderr).toMatch(/this manifest makes 540 videos .*limit of 500 per manifest/);
  }
  // The flag over the project file.
  expect((await runCli(["validate", "--max-videos", "600", "m.yaml"], { cwd: dir })).code).toBe(0);

  const bad = await runCli(["validate", "--max-videos", "0", "m.yaml"], { cwd: dir });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("--max-videos");
});

it("the manifests of one run together make at most the limit: the one that passes it is refused, naming the run's total, and with --skip-invalid the others run", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  // 4 videos each; a limit of 10 lets two manifests through, not three.
  const one = (name: string) => matrixManifest(name, 1, 2);
  await writeTree(dir, { "m/a.yaml": one("a"), "m/b.yaml": one("b"), "m/c.yaml": one("c") });

  const refused = await runCli(["validate", "--max-videos", "10", "m"], { cwd: dir });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(
    /m\/c\.yaml:5:5: the manifests of this run make 12 videos \(this one 4\), .*limit of 10 per run.*--max-videos 12/,
  );
  expect(refused.stderr).not.toMatch(/m\/[ab]\.yaml/);

  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const run = await runCli(["run", "--max-videos", "10", "--skip-invalid", "m"], { cwd: dir, env });
  expect(run.code, run.stderr).toBe(1);
  expect(s.counters.generationsCreated).toBe(8);
  expect(existsSync(join(dir, "out", "c"))).toBe(false);
});

it("watch reports a manifest of 600,000 videos at once, sends nothing for it, and goes on with the next", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await mkdir(join(dir, "incoming"));
  const w = startCommand(["watch", "incoming", "--settle", "200ms"], {
    cwd: dir,
    env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
  });
  await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
  await writeFile(join(dir, "incoming", "big.yaml"), matrixManifest("big", 60, 100));
  await until(() => w.output().stderr.includes("skipped until fixed"), "the problem report");
  expect(w.output().stderr).toMatch(/incoming\/big\.yaml:\d+:5: this manifest makes 600000 videos/);
  expect(s.counters.requests.size).toBe(0);
  await writeFile(join(dir, "incoming", "small.yaml"), matrixManifest("small", 1, 1));
  await until(() => existsSync(join(dir, "out", "small", "p0-a0-b0.mp4")), "the next manifest's video");
  await w.stop();
  expect(s.counters.generationsCreated).toBe(1);
});

it("status names a manifest without name: by its file even past a lower limit, and shows the jobs it ran", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  // 4 videos, named from the file: no name: line.
  await writeTree(dir, { "shop.yaml": matrixManifest("x", 1, 2).replace("name: x\n", "") });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  expect((await runCli(["run", "shop.yaml"], { cwd: dir, env })).code).toBe(0);

  const status = await runCli(["status", "--max-videos", "2", "shop.yaml"], { cwd: dir, env });
  expect(status.code, status.stderr).toBe(0);
  expect(status.stdout).toMatch(/^shop\s+4 jobs: 4 Success$/m);
});
