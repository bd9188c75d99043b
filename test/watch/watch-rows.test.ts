// A watched manifest's `rows:` CSV is followed like the manifest itself, with a real watcher on a
// real temp folder and the sandbox over real HTTP: an edited row is read once the CSV has settled,
// the watcher says what changed (in `plan --explain`'s words), and only that row's video is paid for
// again, for a CSV inside the watched folder and one outside it (under the folder reel was started in).
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCommands, until } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const startCommand = useCommands();

function manifest(name: string, rows: string): string {
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n  - id: hi-{lead_id}\n    rows: ${rows}\n    chunks:\n      - duration: 5\n        text: "{script}"\n`;
}

function csv(scripts: readonly string[]): string {
  return `lead_id,script\n${scripts.map((script, i) => `${101 + i},"${script}"`).join("\n")}\n`;
}

/** The texts of the generations the sandbox accepted (one chunk each), from their canonical bodies. */
function generatedTexts(bodies: Iterable<string>): string[] {
  return [...bodies].map((body) => {
    const parsed = JSON.parse(body) as { chunks: { conditions: { type: string; content: unknown }[] }[] };
    return String(parsed.chunks[0]?.conditions.find((c) => c.type === "text")?.content);
  });
}

describe("reel watch follows a manifest's rows CSV", () => {
  it("one row's script edited in the CSV (inside or outside the folder): one new generation, and the watcher says '1 changed: chunks[0].text'", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await mkdir(join(dir, "incoming"));
    await mkdir(join(dir, "sheets"));
    const inside = ["Hi Anna", "Hi Ben", "Hi Clara"];
    const outside = ["Hallo Dora", "Hallo Emil"];
    await writeFile(join(dir, "incoming", "inside.csv"), csv(inside));
    await writeFile(join(dir, "sheets", "outside.csv"), csv(outside));
    await writeFile(join(dir, "incoming", "inside.yaml"), manifest("inside", "./inside.csv"));
    await writeFile(join(dir, "incoming", "outside.yaml"), manifest("outside", "../sheets/outside.csv"));
    const w = startCommand(["watch", "incoming", "--settle", "150ms"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    const said = (): string => w.output().stderr;
    await until(
      () => /finished +inside 3 Success/.test(said()) && /finished +outside 2 Success/.test(said()),
      "the first 5 videos",
      10_000,
    );
    expect(s.counters.generationsCreated).toBe(5);
    const before = new Set(s.counters.generationsByBody.keys());
    const seen = said().length;

    await writeFile(
      join(dir, "incoming", "inside.csv"),
      csv(["Hi Anna", "Hi Ben, welcome back", "Hi Clara"]),
    );
    await until(() => s.counters.generationsCreated === 6, "the edited inside row's video", 8_000);
    await writeFile(join(dir, "sheets", "outside.csv"), csv(["Hallo Dora", "Hallo Emil, willkommen"]));
    await until(() => s.counters.generationsCreated === 7, "the edited outside row's video", 8_000);
    await until(
      () =>
        (
          said()
            .slice(seen)
            .match(/finished +\w+ \d Success/g) ?? []
        ).length === 2,
      "both manifests final again",
      8_000,
    );
    await w.stop();

    const after = said().slice(seen);
    expect(after).toMatch(
      /incoming\/inside\.yaml: 3 videos of 'inside'; to generate: 1 changed: chunks\[0\]\.text\n/,
    );
    expect(after).toMatch(
      /incoming\/outside\.yaml: 2 videos of 'outside'; to generate: 1 changed: chunks\[0\]\.text\n/,
    );
    const sent = [...s.counters.generationsByBody.keys()].filter((body) => !before.has(body));
    expect(generatedTexts(sent).sort()).toEqual(["Hallo Emil, willkommen", "Hi Ben, welcome back"]);
    expect(s.counters.generationsCreated).toBe(7);
    expect(s.counters.duplicateGenerations()).toBe(0);
  }, 30_000);
});
