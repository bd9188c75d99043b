// What a watcher says of what it is about to pay for, with a real watcher on a real temp folder and
// the sandbox over real HTTP: an edited manifest names how many videos change and which field (in
// `plan --explain`'s words) and the live display counts them; a renamed manifest's warning is printed
// before the service receives anything for it.
import { existsSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SandboxRequest } from "../../src/sandbox/index.js";
import { useCommands, until } from "../helpers/cli.js";
import { usePty } from "../helpers/pty.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const startCommand = useCommands();
const reelInPty = usePty();

function manifest(name: string | undefined, texts: readonly string[]): string {
  const videos = texts
    .map((text, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "${text}"\n`)
    .join("");
  return `version: 1\n${name ? `name: ${name}\n` : ""}defaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

async function workspace(): Promise<string> {
  const dir = await tempDir();
  await mkdir(join(dir, "incoming"));
  return dir;
}

/** The texts of the generations the sandbox accepted (one chunk each), from their canonical bodies. */
function generatedTexts(bodies: Iterable<string>): string[] {
  return [...bodies].map((body) => {
    const parsed = JSON.parse(body) as { chunks: { conditions: { type: string; content: unknown }[] }[] };
    return String(parsed.chunks[0]?.conditions.find((c) => c.type === "text")?.content);
  });
}

describe("reel watch says what it pays for", () => {
  it("an edit of 7 texts: says '7 changed: chunks[0].text', the display counts them, the service gets those 7", async () => {
    // 5 s of video run 1 s: the new versions stay unfinished long enough to be seen on screen.
    const s = await sandbox({ timeScale: 0.2, slots: 9 });
    const dir = await workspace();
    const reel = reelInPty(["watch", "incoming", "--settle", "200ms", "--concurrency", "9"], dir, {
      REEL_BASE_URL: s.baseUrl,
      REEL_API_KEY: s.apiKey,
    });
    await until(async () => (await reel.screen()).includes("watching incoming"), "the watcher", 8_000);
    const first = Array.from({ length: 9 }, (_, i) => `winter take ${i}`);
    await writeFile(join(dir, "incoming", "winter.yaml"), manifest("winter", first));
    await until(
      async () => {
        const screen = await reel.screen();
        return screen.includes("winter: 9 Success") && /9\/9 videos/.test(screen);
      },
      "the first 9 videos",
      15_000,
    );
    const before = new Set(s.counters.generationsByBody.keys());

    const edited = first.map((text, i) => (i < 7 ? `${text}, now in snow` : text));
    await writeFile(join(dir, "incoming", "winter.yaml"), manifest("winter", edited));
    // The 2 videos left as they were still count as made; the 7 changed ones do not, until made.
    await until(async () => /\b2\/9 videos/.test(await reel.screen()), "the bar at 2/9", 8_000);
    // The line may be broken at a space to fit 80 columns, its next lines indented.
    const screen = (await reel.screen()).replace(/\n +/g, " ");
    expect(screen).toMatch(
      /incoming\/winter\.yaml: 9 videos of 'winter'; to generate: 7 changed: chunks\[0\]\.text(?![,\w])/,
    );
    await until(
      async () => /9\/9 videos/.test(await reel.screen()) && s.counters.generationsCreated === 16,
      "the 7 new versions made",
      15_000,
    );
    await until(
      async () => (await reel.screen()).includes("this session: 16 done"),
      "16 made in this session",
      8_000,
    );
    reel.type("\x03");
    expect(await reel.exit).toBe(0);

    // Exactly the 7 edited texts were sent, each once.
    const sent = [...s.counters.generationsByBody.keys()].filter((body) => !before.has(body));
    expect(generatedTexts(sent).sort()).toEqual(edited.slice(0, 7).sort());
    expect(s.counters.generationsCreated).toBe(16);
    expect(s.counters.duplicateGenerations()).toBe(0);
  }, 40_000);

  it("a manifest renamed while its videos are made: the warning comes before anything is sent for the new name", async () => {
    let stderr = (): string => "";
    // Each answered generation with what the watcher had printed by then.
    const generations: { said: string }[] = [];
    const onRequest = (r: SandboxRequest): void => {
      if (r.method === "POST" && r.route === "/v1/generations" && r.status === 200)
        generations.push({ said: stderr() });
    };
    const s = await sandbox({ timeScale: 0.3, onRequest });
    const dir = await workspace();
    const w = startCommand(["watch", "incoming", "--settle", "200ms"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    stderr = () => w.output().stderr;
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "promo.yaml"), manifest(undefined, ["one", "two"]));
    await until(() => generations.length === 2, "promo's two submissions");
    await rename(join(dir, "incoming", "promo.yaml"), join(dir, "incoming", "promo-final.yaml"));
    await until(() => generations.length === 4, "promo-final's two submissions");
    await until(() => existsSync(join(dir, "out", "promo-final", "v1.mp4")), "promo-final's videos");
    await w.stop();
    const warning = "2 new jobs repeat videos already made under another name (promo-final/v0 = promo/v0)";
    expect(w.output().stderr).toContain(warning);
    // Both of promo-final's generations reached the service after the warning was printed.
    expect(generations.slice(2).map((g) => g.said.includes(warning))).toEqual([true, true]);
  });
});
