// `reel export` after a real run on the sandbox over real HTTP, with a real state file and real files:
// delivery names, the delivery sheet joined back to the manifest's variables, refusals that write
// nothing, idempotence, and --prune removing only what export wrote.
import { existsSync } from "node:fs";
import { appendFile, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

// Two languages times two takes; the German tagline reads as a formula to a spreadsheet program.
const PROMO = `version: 1
name: promo
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: promo-{lang}
    takes: 2
    matrix:
      lang:
        - { lang: en, tagline: "Hello there" }
        - { lang: de, tagline: "=HYPERLINK(\\"http://x\\")" }
    chunks:
      - duration: 5
        text: "{tagline}"
`;

const env = (s: Sandbox): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  REEL_REVIEWER: "ana",
});

async function cli(dir: string, s: Sandbox, argv: string[], code = 0) {
  const result = await runCli(argv, { cwd: dir, env: env(s) });
  expect(result.code, `${argv.join(" ")}: ${result.stdout}${result.stderr}`).toBe(code);
  return result;
}

/** promo run; promo-en~1 and promo-de~2 approved, promo-en~2 rejected, promo-de~1 undecided. */
async function campaign(s: Sandbox, files: Record<string, string> = {}) {
  const dir = await tempDir();
  await writeTree(dir, { "promo.yaml": PROMO, ...files });
  await cli(dir, s, ["run", "promo.yaml"]);
  await cli(dir, s, ["approve", "promo/promo-en~1"]);
  await cli(dir, s, ["approve", "promo/promo-de~2"]);
  await cli(dir, s, ["reject", "promo/promo-en~2"]);
  return dir;
}

/** Every file under `root`, relative, "/"-separated. */
async function filesUnder(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

interface Line {
  file: string;
  manifest: string;
  id: string;
  take: number;
  sha256: string;
  bytes: number;
  decision: string | null;
  reviewer: string | null;
  lang: string;
  tagline: string;
  spoken: string[];
  [column: string]: unknown;
}

const jsonl = async (path: string): Promise<Line[]> =>
  (await readFile(path, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

describe("reel export", () => {
  it("exports the approved takes under default names with a sheet that joins back to the manifest, and again writes nothing", async () => {
    const s = await sandbox();
    const dir = await campaign(s);
    const first = await cli(dir, s, ["export", "delivery", "promo.yaml"]);
    expect(first.stdout).toContain("exported 2 videos to delivery: 2 written (2 hard-linked, 0 copied)");
    const delivery = join(dir, "delivery");
    expect(await filesUnder(delivery)).toEqual([
      ".reel-export.json",
      "delivery.csv",
      "delivery.jsonl",
      "promo/promo-de~2.mp4",
      "promo/promo-en~1.mp4",
    ]);
    // The same bytes as the output folder's, by a hard link.
    const out = await stat(join(dir, "out", "promo", "promo-en~1.mp4"));
    const exported = await stat(join(delivery, "promo", "promo-en~1.mp4"));
    expect(exported.ino).toBe(out.ino);

    // The sheet joins back: each line's id and variables are those of the job the manifest made.
    const lines = await jsonl(join(delivery, "delivery.jsonl"));
    const manifestVars: Record<string, { lang: string; tagline: string }> = {
      en: { lang: "en", tagline: "Hello there" },
      de: { lang: "de", tagline: '=HYPERLINK("http://x")' },
    };
    expect(lines.map((l) => l.id)).toEqual(["promo-de~2", "promo-en~1"]);
    for (const line of lines) {
      const lang = /^promo-(\w+)~/.exec(line.id)![1]!;
      expect({ lang: line.lang, tagline: line.tagline }).toEqual(manifestVars[lang]);
      expect(line).toMatchObject({
        manifest: "promo",
        decision: "approved",
        reviewer: "ana",
        file: `promo/${line.id}.mp4`,
      });
      expect(line.bytes).toBe((await stat(join(delivery, line.file))).size);
      const record = JSON.parse(await readFile(join(dir, "out", "promo", `${line.id}.json`), "utf8")) as {
        sha256: string;
      };
      expect(line.sha256).toBe(record.sha256);
    }
    // A formula cell stays text in the CSV only; the JSONL keeps it exact.
    const csv = await readFile(join(delivery, "delivery.csv"), "utf8");
    expect(csv.split("\r\n")[0]).toBe(
      "file,manifest,id,take,taskId,seed,model,resolution,aspectRatio,seconds,bytes,sha256,decision,reviewer,decidedAt,spoken,lang,tagline",
    );
    expect(csv).toContain(`"'=HYPERLINK(""http://x"")"`);
    expect(csv).not.toMatch(/,"?=HYPERLINK/);
    expect(lines.find((l) => l.lang === "de")!.tagline).toBe('=HYPERLINK("http://x")');

    // Again: nothing written (same inodes and times, sheets and ledger untouched).
    const before = await Promise.all(
      (await filesUnder(delivery)).map(async (f) => [
        f,
        (await stat(join(delivery, f))).mtimeMs,
        (await stat(join(delivery, f))).ino,
      ]),
    );
    const again = await cli(dir, s, ["export", "delivery", "promo.yaml"]);
    expect(again.stdout).toContain("0 written");
    expect(again.stdout).toContain("2 unchanged");
    expect(again.stdout).toContain("sheets unchanged");
    const after = await Promise.all(
      (await filesUnder(delivery)).map(async (f) => [
        f,
        (await stat(join(delivery, f))).mtimeMs,
        (await stat(join(delivery, f))).ino,
      ]),
    );
    expect(after).toEqual(before);
  });

  it("exports an approved retake of a manifest's video with the video's variables, manifests given or not", async () => {
    // A retake is a job no manifest writes (promo-en~3 after takes: 2): it is still that video's.
    const s = await sandbox();
    const dir = await campaign(s);
    await cli(dir, s, ["retake", "promo/promo-en~2", "--note", "blurry"]);
    await cli(dir, s, ["run", "promo.yaml"]);
    await cli(dir, s, ["approve", "promo/promo-en~3"]);

    const given = await cli(dir, s, ["export", "delivery", "promo.yaml"]);
    expect(given.stdout).toContain("exported 3 videos");
    const lines = await jsonl(join(dir, "delivery", "delivery.jsonl"));
    expect(lines.map((l) => l.id)).toEqual(["promo-de~2", "promo-en~1", "promo-en~3"]);
    expect(lines.find((l) => l.id === "promo-en~3")).toMatchObject({ lang: "en", tagline: "Hello there" });

    const all = await cli(dir, s, ["export", "everything"]);
    expect(all.stdout).toContain("exported 3 videos");
  });

  it("names by a template, refuses a collision and a hostile name before writing anything", async () => {
    const s = await sandbox();
    const dir = await campaign(s);
    const delivery = join(dir, "delivery");
    const clash = await cli(
      dir,
      s,
      ["export", "delivery", "promo.yaml", "--status", "success", "--name", "{lang}/{video}.mp4"],
      2,
    );
    expect(clash.stderr).toMatch(
      /gives promo\/promo-de~1 and promo\/promo-de~2 one name, "de\/promo-de.mp4"/,
    );
    expect(existsSync(delivery)).toBe(false);

    for (const hostile of [
      "../{id}.mp4",
      "/tmp/{id}.mp4",
      "{lang}/../../x-{id}.mp4",
      "CON/{id}.mp4",
      "{id}:x.mp4",
      "{id}. ",
    ]) {
      const refused = await cli(dir, s, ["export", "delivery", "promo.yaml", "--name", hostile], 2);
      expect(refused.stderr).toContain("Nothing was written");
    }
    expect(existsSync(delivery)).toBe(false);
    expect((await readdir(dir)).sort()).toEqual(
      [".reel", "out", "promo.yaml"].filter((n) => existsSync(join(dir, n))).sort(),
    );

    const named = await cli(dir, s, [
      "export",
      "delivery",
      "promo.yaml",
      "--name",
      "{lang}/take{take}-{model}-{resolution}.mp4",
    ]);
    expect(named.stdout).toContain("exported 2 videos");
    expect(await filesUnder(delivery)).toEqual([
      ".reel-export.json",
      "de/take2-actor-2-720p.mp4",
      "delivery.csv",
      "delivery.jsonl",
      "en/take1-actor-2-720p.mp4",
    ]);
  });

  it("--prune removes only the videos export wrote and no longer chosen; the user's files stay", async () => {
    const s = await sandbox();
    const dir = await campaign(s);
    const delivery = join(dir, "delivery");
    await cli(dir, s, ["export", "delivery", "promo.yaml"]);
    await writeFile(join(delivery, "promo", "notes.txt"), "the client's notes");
    await writeFile(join(delivery, "promo", "promo-en~2.mp4"), "a file of the user's own");
    await cli(dir, s, ["reject", "promo/promo-de~2"]);

    const kept = await cli(dir, s, ["export", "delivery", "promo.yaml"]);
    expect(kept.stdout).toContain("kept 1 file(s)");
    expect(existsSync(join(delivery, "promo", "promo-de~2.mp4"))).toBe(true);
    expect((await jsonl(join(delivery, "delivery.jsonl"))).map((l) => l.id)).toEqual(["promo-en~1"]);

    const pruned = await cli(dir, s, ["export", "delivery", "promo.yaml", "--prune"]);
    expect(pruned.stdout).toContain("removed promo/promo-de~2.mp4 (no longer chosen)");
    expect(await filesUnder(delivery)).toEqual([
      ".reel-export.json",
      "delivery.csv",
      "delivery.jsonl",
      "promo/notes.txt",
      "promo/promo-en~1.mp4",
      "promo/promo-en~2.mp4",
    ]);
    expect(await readFile(join(delivery, "promo", "promo-en~2.mp4"), "utf8")).toBe(
      "a file of the user's own",
    );
    // Now chosen, but a file of the user's holds its name: refused, nothing written.
    const refused = await cli(dir, s, ["export", "delivery", "promo.yaml", "--status", "success"], 2);
    expect(refused.stderr).toContain(
      "promo/promo-en~2.mp4 (for promo/promo-en~2) was not written by reel export",
    );
    expect(await readFile(join(delivery, "promo", "promo-en~2.mp4"), "utf8")).toBe(
      "a file of the user's own",
    );
    expect(existsSync(join(delivery, "promo", "promo-de~1.mp4"))).toBe(false);
  });

  it("refuses a damaged source video, naming it, with nothing written; nothing approved says so", async () => {
    const s = await sandbox();
    const dir = await campaign(s);
    await appendFile(join(dir, "out", "promo", "promo-de~2.mp4"), "damage");
    const refused = await cli(dir, s, ["export", "delivery", "promo.yaml"], 1);
    expect(refused.stderr).toContain("promo/promo-de~2:");
    expect(refused.stderr).toContain("not the video reel wrote");
    expect(existsSync(join(dir, "delivery"))).toBe(false);

    const none = await cli(dir, s, ["export", "other", "promo.yaml", "--only", "promo-de~1"]);
    expect(none.stdout).toContain("Nothing to export: no approved take");
    expect(none.stdout).toContain("--status success");
    expect(existsSync(join(dir, "other"))).toBe(false);
  });

  it("takes the name template, the sheet and the status from reel.yaml's export:, and the flags override it", async () => {
    const s = await sandbox();
    const project = `version: 1
export:
  name: "{lang}/take{take}.mp4"
  sheet: jsonl
  status: success
`;
    const dir = await campaign(s, { "reel.yaml": project });
    const fromFile = await cli(dir, s, ["export", "delivery", "promo.yaml"]);
    expect(fromFile.stdout).toContain("exported 4 videos to delivery");
    expect(await filesUnder(join(dir, "delivery"))).toEqual([
      ".reel-export.json",
      "de/take1.mp4",
      "de/take2.mp4",
      "delivery.jsonl",
      "en/take1.mp4",
      "en/take2.mp4",
    ]);

    const flags = await cli(dir, s, [
      "export",
      "other",
      "promo.yaml",
      "--name",
      "{id}.mp4",
      "--sheet",
      "csv",
      "--status",
      "approved",
    ]);
    expect(flags.stdout).toContain("exported 2 videos to other");
    expect(await filesUnder(join(dir, "other"))).toEqual([
      ".reel-export.json",
      "delivery.csv",
      "promo-de~2.mp4",
      "promo-en~1.mp4",
    ]);
  });

  it("refuses a bad export: in reel.yaml at its line and column, with the fix, and copies nothing", async () => {
    const s = await sandbox();
    const dir = await campaign(s);
    const delivery = join(dir, "delivery");
    const bad = async (exportLines: string, expected: string) => {
      await writeFile(join(dir, "reel.yaml"), `version: 1\nexport:\n${exportLines}`);
      const refused = await cli(dir, s, ["export", "delivery", "promo.yaml"], 2);
      expect(refused.stderr).toContain(expected);
      expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(existsSync(delivery)).toBe(false);
    };
    // Outside DIR: refused as the file is read, at the template.
    await bad(
      '  name: "../{id}.mp4"\n',
      'reel.yaml:3:9: export.name "../{id}.mp4" has "..": names stay inside DIR',
    );
    await bad("  name: /srv/{id}.mp4\n", 'reel.yaml:3:9: export.name "/srv/{id}.mp4" is an absolute path');
    // A placeholder no video has: refused before the first copy, at the template.
    await bad(
      '  name: "{lang}/{region}.mp4"\n',
      'reel.yaml:3:9: export.name "{lang}/{region}.mp4": promo/promo-de~2 has no {region}',
    );
    // Two videos under one name.
    await bad(
      '  status: success\n  name: "{lang}.mp4"\n',
      'reel.yaml:4:9: export.name "{lang}.mp4" gives promo/promo-de~1 and promo/promo-de~2 one name',
    );
    await bad("  sheet: xlsx\n", 'reel.yaml:3:10: export.sheet takes csv, jsonl or both, not "xlsx"');
    await bad("  status: done\n", 'reel.yaml:3:11: export.status takes approved or success, not "done"');
    await bad("  names: x\n", "reel.yaml:3:3: unknown export setting 'names'; did you mean name?");
    // The flag overrides the file's template (one that names a placeholder no video has).
    await writeFile(join(dir, "reel.yaml"), 'version: 1\nexport:\n  name: "{region}.mp4"\n');
    const flag = await cli(dir, s, ["export", "delivery", "promo.yaml", "--name", "{id}.mp4"]);
    expect(flag.stdout).toContain("exported 2 videos");
  });
});
