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
    // The row's physical line in the reordered file, and the column of the cell that changed.
    const benLine = (await readFile(csvPath, "utf8")).split("\n").findIndex((l) => l.startsWith("1002,")) + 1;
    expect(benLine).toBe(13);
    expect(plan.stdout).toContain(
      "why (1 to submit):\n  welcome/welcome-1002: changed since its last version:\n" +
        '      chunks[0].speech.text "Hi Ben, your order ships from Hamburg today." -> "Hi Ben, our order ships from Hamburg today." (manifests/leads.csv:13, column "script")\n',
    );
    const json = await runCli(["plan", "--explain", "--json", ...args], { cwd: dir, env: env(s) });
    const explained = (
      JSON.parse(json.stdout) as { explain: { key: string; reasons: { cells?: unknown }[] }[] }
    ).explain;
    expect(explained.map((e) => [e.key, e.reasons.map((r) => r.cells)])).toEqual([
      [
        "welcome/welcome-1002",
        [[{ field: "chunks[0].speech.text", file: "manifests/leads.csv", line: 13, columns: ["script"] }]],
      ],
    ]);
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

  it("plan --explain names the cell a change came from: the one column of several that explains it, every one when more changed, none when the manifest changed", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const manifest = (greeting: string) => `version: 1
name: hello
defaults: { model: actor-2, resolution: 720p }
videos:
  - id: hello-{key}
    rows: ./people.csv
    chunks:
      - duration: 5
        text: "${greeting} {name} from {city}, {name}!"
`;
    await writeFile(join(dir, "hello.yaml"), manifest("Hi"));
    const csv = "key,name,city\n1,Ann,Rome\n2,Bob,Oslo\n3,Cy,Riga\n";
    await writeFile(join(dir, "people.csv"), csv);
    const run = await runCli(["run", "hello.yaml"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    const explain = async () => {
      const plan = await runCli(["plan", "--explain", "hello.yaml"], { cwd: dir, env: env(s) });
      expect(plan.code, plan.stderr).toBe(0);
      return plan.stdout.slice(plan.stdout.indexOf("why ("));
    };

    // One city changed, one name and city of another: each job names what explains its change.
    await writeFile(
      join(dir, "people.csv"),
      csv.replace("2,Bob,Oslo", "2,Bob,Bergen").replace("3,Cy,Riga", "3,Cyd,Tartu"),
    );
    expect(await explain()).toBe(
      [
        "why (2 to submit):",
        "  hello/hello-2: changed since its last version:",
        '      chunks[0].text "Hi Bob from Oslo, Bob!" -> "Hi Bob from Bergen, Bob!" (people.csv:3, column "city")',
        "  hello/hello-3: changed since its last version:",
        '      chunks[0].text "Hi Cy from Riga, Cy!" -> "Hi Cyd from Tartu, Cyd!" (people.csv:4, columns "name", "city")',
        "",
      ].join("\n"),
    );

    // The manifest's text changed: every row's job, and no cell named.
    await writeFile(join(dir, "people.csv"), csv);
    await writeFile(join(dir, "hello.yaml"), manifest("Hello"));
    const all = await explain();
    expect(all).toContain("why (3 to submit):");
    expect(all).toContain('      chunks[0].text "Hi Ann from Rome, Ann!" -> "Hello Ann from Rome, Ann!"\n');
    expect(all).not.toContain("people.csv");
  });
});
