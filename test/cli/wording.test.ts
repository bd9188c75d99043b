// What reel prints, read as a person reads it: a name said once, counts in proper singular and
// plural, no line about nothing, a mistyped name answered with the one meant, and no claim the
// output does not keep (a browser opened, a limit that no longer holds).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const ONE = `version: 1
name: broll
videos:
  - id: intro
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a lake at dawn"
`;

it("a piped run names each video done once: the file, not the job and then its file", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "broll.yaml": ONE });
  const run = await runCli(["run", "broll.yaml"], {
    cwd: dir,
    env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/^\[ *\d+\.\ds\] done +broll\/intro\.mp4$/m);
  expect(run.stderr).not.toContain("broll/intro broll/intro.mp4");
});

it("counts are said in the singular for one, the plural for more: never 'problem(s)'", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "broll.yaml": ONE.replace("duration: 5", "duration: -5") });
  const run = await runCli(["run", "--sandbox", "broll.yaml"], { cwd: dir });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("reel run: 1 problem in 1 file; nothing was sent.\n");
  const json = await runCli(["run", "--sandbox", "--json", "broll.yaml"], { cwd: dir });
  expect(JSON.parse(json.stdout)).toMatchObject({
    error: { message: "1 problem in 1 file; nothing was sent" },
  });
  const plan = await runCli(["plan", "--json", "broll.yaml"], { cwd: dir });
  expect(JSON.parse(plan.stdout)).toMatchObject({ error: { message: "1 problem in 1 file" } });
  for (const text of [run.stderr, json.stdout, plan.stdout]) expect(text).not.toContain("(s)");
});

it("plan says nothing of downloads when there are none, and counts one as one", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "broll.yaml": ONE });
  const none = await runCli(["plan", "broll.yaml"], { cwd: dir });
  expect(none.code, none.stderr).toBe(0);
  expect(none.stdout).not.toMatch(/downloads/);
  await writeFile(
    join(dir, "broll.yaml"),
    `version: 1
name: broll
videos:
  - id: face
    model: avatar-h1
    resolution: 720p
    source: https://example.com/face.png
    chunks:
      - duration: 5
        speech: { voice: 17, text: "hello" }
`,
  );
  const one = await runCli(["plan", "broll.yaml"], { cwd: dir });
  expect(one.code, one.stderr).toBe(0);
  expect(one.stdout).toMatch(/^downloads +1 https file to fetch, then upload$/m);
});

it("--open says so when no browser opened the report, and where the report is", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "broll.yaml": ONE });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, PATH: process.env.PATH };
  // A browser command that fails (as xdg-open does on a machine without a desktop), and one that
  // does not exist.
  for (const browser of ["false", join(dir, "no-such-browser")]) {
    const run = await runCli(["run", "broll.yaml", "--open"], {
      cwd: dir,
      env: { ...env, BROWSER: browser },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`reel run: no browser opened the report (${browser}: `);
    expect(run.stderr).toContain(`open ${join("out", "index.html")} yourself`);
  }
  const opened = await runCli(["run", "broll.yaml", "--open"], {
    cwd: dir,
    env: { ...env, BROWSER: "true" },
  });
  expect(opened.code).toBe(0);
  expect(opened.stderr).not.toContain("no browser");
});

it("run --help describes --store as it works: a fleet of runners shares it", async () => {
  const help = await runCli(["run", "--help"], { cwd: await tempDir() });
  expect(help.stdout).not.toMatch(/one runner at a time/i);
  expect(help.stdout).toMatch(/--store URL[^\n]*\n(?: {20,}[^\n]*\n)*[^\n]*any number of runners/i);
});
