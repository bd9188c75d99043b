// Input that would silently change a paid prompt, as the commands show it: warnings in validate,
// plan and run (text and --json), a cut text refused, and --skip-invalid, which runs the valid
// manifests of a folder and lists the invalid ones, sending nothing of them.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, until, useCommands, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const startCommand = useCommands();

/** Valid, with a comment after its text: runs, with a warning. */
const COMMENTED = `version: 1
name: good
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: smiles at the camera  # try sadder next time
`;

/** `#1` cut from the text: refused. */
const CUT = `version: 1
name: cut
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: Shot #1 of the shop
`;

/** An indentation mistake. */
const BROKEN = `version: 1
name: broken
videos:
  - id: a
    model: actor-2
      chunks:
      - duration: 5
        text: hi
`;

const WARNING =
  'good.yaml:9:37: warning: this text is sent as "smiles at the camera": " #" starts a YAML comment, so "# try sadder next time" is left out; if it belongs to the text, put the whole text in quotes: text: "smiles at the camera # try sadder next time", or move the comment to a line of its own';

interface ResultLine {
  manifest: string;
  id: string;
  status: string;
}

async function resultsOf(dir: string): Promise<ResultLine[]> {
  const text = await readFile(join(dir, "out", "results.jsonl"), "utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ResultLine);
}

describe("warnings", () => {
  it("validate prints them on stderr, the manifest stays valid (exit 0); --json lists them", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "good.yaml": COMMENTED });
    const text = await runCli(["validate", "good.yaml"], { cwd: dir });
    expect(text).toEqual({
      code: 0,
      stdout: "1 manifest, 1 video, 5 s of video: ok\n",
      stderr: `${WARNING}\nreel validate: 1 warning\n`,
    });
    const json = await runCli(["validate", "--json", "good.yaml"], { cwd: dir });
    expect(json.code).toBe(0);
    const document = JSON.parse(json.stdout) as { ok: boolean; warnings: unknown[] };
    expect(document.ok).toBe(true);
    expect(document.warnings).toEqual([
      expect.objectContaining({ file: "good.yaml", line: 9, col: 37, code: "W_TEXT_COMMENT" }),
    ]);
  });

  it("plan prints them before the plan; plan --json lists them", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "good.yaml": COMMENTED });
    const text = await runCli(["plan", "good.yaml"], { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stderr).toBe(`${WARNING}\nreel plan: 1 warning\n`);
    expect(text.stdout).toContain("jobs       1 new");
    const json = await runCli(["plan", "--json", "good.yaml"], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      warnings: [{ code: "W_TEXT_COMMENT", line: 9 }],
      skipped: [],
    });
  });

  it("run prints them before it starts and runs the manifest; run --json lists them", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "good.yaml": COMMENTED });
    const text = await runCli(["run", "--sandbox", "good.yaml"], { cwd: dir });
    expect(text.code).toBe(0);
    // Before the run starts: right after the first line, which names the state file.
    expect(text.stderr.split("\n").slice(1, 3)).toEqual([WARNING, "reel run: 1 warning"]);
    expect(await resultsOf(dir)).toMatchObject([{ manifest: "good", id: "a", status: "Success" }]);
    const json = await runCli(["run", "--sandbox", "--json", "good.yaml"], { cwd: dir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      outcome: "completed",
      warnings: [{ file: "good.yaml", code: "W_TEXT_COMMENT" }],
      skipped: [],
    });
  });
});

describe("a text cut by a comment", () => {
  it("is refused by run with the fix, and nothing is sent (exit 2)", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "cut.yaml": CUT });
    const run = await runCli(["run", "--sandbox", "cut.yaml"], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'cut.yaml:9:20: this text would be sent as "Shot": " #" starts a YAML comment, so "#1 of the shop" is left out; if it belongs to the text, put the whole text in quotes: text: "Shot #1 of the shop"',
    );
    expect(existsSync(join(dir, ".reel"))).toBe(false);
  });
});

describe("--skip-invalid", () => {
  it("without it, one invalid manifest stops the whole run (exit 2, nothing sent), and the flag is named", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "m/good.yaml": COMMENTED, "m/cut.yaml": CUT });
    const run = await runCli(["run", "--sandbox", "m"], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("reel run: 1 problem in 1 file; nothing was sent.");
    expect(run.stderr).toContain("(--skip-invalid would run the 1 valid manifest and list the invalid ones)");
    expect(existsSync(join(dir, ".reel"))).toBe(false);
  });

  it("run runs the valid manifests, lists the invalid ones with their problems, sends nothing of them, exits 1", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "m/good.yaml": COMMENTED, "m/cut.yaml": CUT, "m/broken.yaml": BROKEN });
    const run = await runCli(["run", "--sandbox", "--skip-invalid", "m"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'm/broken.yaml:6:7: "chunks:" is indented more than "model:" above it, which already has a value, so YAML reads it as part of that value: start it in column 5, as "model:"',
    );
    expect(run.stderr).toContain("m/cut.yaml:9:20: this text would be sent as");
    expect(run.stderr).toContain(
      "reel run: skipped 2 invalid manifests (nothing of them is sent): m/broken.yaml, m/cut.yaml",
    );
    expect(run.stderr).toContain("reel run: completed. 1 Success");
    expect(run.stderr).toContain(
      "Skipped as invalid, nothing of them sent: m/broken.yaml, m/cut.yaml. Fix them (reel validate lists the problems) and run again.",
    );
    expect(await resultsOf(dir)).toMatchObject([{ manifest: "good", id: "a", status: "Success" }]);
    expect(existsSync(join(dir, "out", "cut"))).toBe(false);
    // What the state knows: only the valid manifest's job.
    const status = await runCli(["status", "--json"], { cwd: dir });
    expect(status.stdout).not.toContain('"cut"');
    expect(status.stdout).toContain('"good"');
  });

  it("run --json lists the skipped manifests with their problems; not ok, exit 1", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "m/good.yaml": COMMENTED, "m/cut.yaml": CUT });
    const run = await runCli(["run", "--sandbox", "--skip-invalid", "--json", "m"], { cwd: dir });
    expect(run.code).toBe(1);
    const document = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(document).toMatchObject({
      ok: false,
      outcome: "completed",
      counts: { Success: 1 },
      warnings: [{ file: "m/good.yaml", code: "W_TEXT_COMMENT" }],
      skipped: [
        { file: "m/cut.yaml", problems: [{ file: "m/cut.yaml", line: 9, col: 20, code: "E_TEXT_CUT" }] },
      ],
    });
    expect((document.results as ResultLine[]).map((r) => r.manifest)).toEqual(["good"]);
  });

  it("run exits 0 when nothing was skipped, and 2 when every manifest is invalid (nothing to run)", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "ok/good.yaml": COMMENTED, "bad/cut.yaml": CUT, "bad/broken.yaml": BROKEN });
    expect((await runCli(["run", "--sandbox", "--skip-invalid", "ok"], { cwd: dir })).code).toBe(0);
    const none = await runCli(["run", "--sandbox", "--skip-invalid", "bad"], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("reel run: 2 problems in 2 files; nothing was sent.");
  });

  it("plan plans the valid manifests and lists the invalid ones (exit 1; --json: skipped)", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "m/good.yaml": COMMENTED, "m/cut.yaml": CUT });
    const text = await runCli(["plan", "--skip-invalid", "m"], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(
      "reel plan: skipped 1 invalid manifest (run --skip-invalid sends nothing of it): m/cut.yaml",
    );
    expect(text.stdout).toContain("1 manifest, 1 video, 5 s of video: ok (1 invalid skipped)");
    expect(text.stdout).toContain("jobs       1 new");
    const json = await runCli(["plan", "--skip-invalid", "--json", "m"], { cwd: dir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      summary: { manifests: 1, videos: 1 },
      skipped: [{ file: "m/cut.yaml", problems: [{ code: "E_TEXT_CUT" }] }],
    });
    expect((await runCli(["plan", "m"], { cwd: dir })).code).toBe(2);
  });
});

describe("watch", () => {
  it("prints a manifest's warnings once and runs it; skips a manifest with a cut text until fixed", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await mkdir(join(dir, "incoming"));
    const w = startCommand(["watch", "incoming", "--settle", "200ms"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "good.yaml"), COMMENTED);
    await writeFile(join(dir, "incoming", "cut.yaml"), CUT);
    await until(() => existsSync(join(dir, "out", "good", "a.mp4")), "good's video");
    await until(
      () => w.output().stderr.includes("incoming/cut.yaml: skipped until fixed"),
      "cut.yaml skipped",
    );
    // A touch of the file (same text) prints nothing again.
    await writeFile(join(dir, "incoming", "good.yaml"), COMMENTED);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const { stderr } = await w.stop();
    const warning = WARNING.replace("good.yaml:", "incoming/good.yaml:");
    expect(stderr.split(warning).length - 1).toBe(1);
    expect(stderr).toContain('incoming/cut.yaml:9:20: this text would be sent as "Shot"');
    expect(s.counters.generationsCreated).toBe(1);
  });
});
