// A campaign from a spreadsheet, run for real against the sandbox over HTTP: manifests/welcome.yaml
// makes a video per row of manifests/leads.csv; a row's job follows its key, so reordering rows
// sends nothing and editing one row's script sends exactly one generation.
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { REPO, runCli } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

describe("rows: a campaign from a CSV", () => {
  it("runs a video per row; reordering rows makes no new job, editing one row makes exactly one", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await cp(join(REPO, "manifests"), join(dir, "manifests"), { recursive: true });
    const args = ["manifests/welcome.yaml"];
    const first = await runCli(["run", ...args], { cwd: dir, env: env(s) });
    expect(first.code, first.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(12);
    const ids = Array.from({ length: 12 }, (_, i) => `welcome-${1001 + i}.mp4`);
    for (const file of ids) await readFile(join(dir, "out", "welcome", file));

    // Rows reversed (the quoted line break of the last row kept whole): nothing is new.
    const csvPath = join(dir, "manifests", "leads.csv");
    const csv = await readFile(csvPath, "utf8");
    const [header, ...body] = csv.trimEnd().split(/\n(?=\d{4},)/);
    await writeFile(csvPath, [header, ...body.reverse()].join("\r\n") + "\r\n");
    const reordered = await runCli(["run", ...args], { cwd: dir, env: env(s) });
    expect(reordered.code, reordered.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(12);

    // One row's script edited: plan --explain names the field; the run sends one generation.
    await writeFile(
      csvPath,
      (await readFile(csvPath, "utf8")).replace("Hi Ben, your order", "Hi Ben, our order"),
    );
    const plan = await runCli(["plan", "--explain", ...args], { cwd: dir, env: env(s) });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      "why (1 to submit):\n  welcome/welcome-1002: changed since its last version:\n",
    );
    expect(plan.stdout).toContain('"Hi Ben, our order ships from Hamburg today."');
    const edited = await runCli(["run", ...args], { cwd: dir, env: env(s) });
    expect(edited.code, edited.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(13);
  });

  it("refuses a bad cell at leads.csv:LINE:COL and sends nothing", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await cp(join(REPO, "manifests"), join(dir, "manifests"), { recursive: true });
    const csvPath = join(dir, "manifests", "leads.csv");
    await writeFile(
      csvPath,
      (await readFile(csvPath, "utf8")).replace("1003,Clara,Munich,17", "1003,Clara,Munich,seventeen"),
    );
    const run = await runCli(["run", "manifests/welcome.yaml"], { cwd: dir, env: env(s) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'manifests/leads.csv:4:19: welcome-1003: voice "seventeen" is not a voice id (a whole number)',
    );
    expect(s.counters.generationsCreated).toBe(0);
  });
});
