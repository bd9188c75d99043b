// The reports of an output folder list every video in it, not only the last run's: a run of one
// manifest after another keeps the first one's videos in results.jsonl and index.html, marks its own
// jobs (a filter in the page, in a real Chromium), and says in --json only what it did. `reel forget`
// drops a manifest deleted from the project from both, and deletes nothing on disk.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { CHROMIUM, HAS_CHROMIUM, LAUNCH_ARGS } from "./browser.js";

const manifest = (...ids: string[]) => `version: 1
defaults:
  model: actor-2
  resolution: 720p
videos:
${ids.map((id) => `  - id: ${id}\n    chunks:\n      - duration: 5\n        text: "take ${id}"\n`).join("")}`;

interface Line {
  manifest: string;
  id: string;
  status: string;
  file: string | null;
  thisRun: boolean;
}

const env = (s: Sandbox) => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

describe.skipIf(!HAS_CHROMIUM)("the reports of an output folder", () => {
  const sandbox = useSandboxes();
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function withPage<T>(file: string, use: (page: Page) => Promise<T>): Promise<T> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector("body[data-ready]");
      const result = await use(page);
      expect(errors).toEqual([]);
      return result;
    } finally {
      await context.close();
    }
  }

  const cardNames = (page: Page) =>
    page
      .locator("#cards > .card:not([hidden]) .name")
      .allTextContents()
      .then((names) => names.sort());

  it("list every manifest run into it, mark the last run's jobs, and drop a manifest on `reel forget`", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, {
      "manifests/broll.yaml": manifest("lake", "city"),
      "manifests/promo.yaml": manifest("intro"),
    });
    const first = await runCli(["run", "manifests/broll.yaml"], { cwd: dir, env: env(s) });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(["run", "manifests/promo.yaml", "--json"], { cwd: dir, env: env(s) });
    expect(second.code, second.stderr).toBe(0);

    // --json says what this run did: promo's one video, nothing of broll.
    const summary = JSON.parse(second.stdout) as { counts: Record<string, number>; results: Line[] };
    expect(summary.counts).toEqual({ Success: 1 });
    expect(summary.results.map((r) => `${r.manifest}/${r.id}`)).toEqual(["promo/intro"]);

    // results.jsonl: every video of the folder, this run's marked.
    const lines = await readResults<Line>(dir);
    expect(lines.map((l) => [`${l.manifest}/${l.id}`, l.status, l.thisRun]).sort()).toEqual([
      ["broll/city", "Success", false],
      ["broll/lake", "Success", false],
      ["promo/intro", "Success", true],
    ]);
    expect(lines.find((l) => l.id === "lake")?.file).toBe("broll/lake.mp4");

    const page = join(dir, "out", "index.html");
    await withPage(page, async (p) => {
      await expect.poll(() => cardNames(p)).toEqual(["broll / city", "broll / lake", "promo / intro"]);
      expect(await p.locator('button.tile[data-status=""] b').textContent()).toBe("3");
      expect(await p.locator(".card .run-mark").count()).toBe(1);
      expect(await p.locator(".card", { hasText: "intro" }).locator(".run-mark").count()).toBe(1);
      // The filter: this run's jobs only, kept in the address across a reload.
      await p.check("#filter-run");
      await expect.poll(() => cardNames(p)).toEqual(["promo / intro"]);
      expect(await p.locator("#shown").textContent()).toBe("1 of 3 jobs shown");
      await p.reload();
      await p.waitForSelector("body[data-ready]");
      expect(await p.isChecked("#filter-run")).toBe(true);
      await expect.poll(() => cardNames(p)).toEqual(["promo / intro"]);
      await p.click("#filter-clear");
      await expect.poll(() => cardNames(p)).toHaveLength(3);
    });

    // broll's manifest is deleted from the project; its videos stay listed until it is forgotten.
    await rm(join(dir, "manifests", "broll.yaml"));
    const unknown = await runCli(["forget", "manifests/brol.yaml"], { cwd: dir, env: env(s) });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "reel forget: no manifest 'brol' in the reports of out; did you mean 'broll'? (they list: broll, promo)",
    );
    expect((await readResults<Line>(dir)).length).toBe(3);

    const forget = await runCli(["forget", "manifests/broll.yaml"], { cwd: dir, env: env(s) });
    expect(forget.code, forget.stderr).toBe(0);
    expect(forget.stderr).toContain("reel forget: broll dropped from out/results.jsonl and out/index.html");
    expect((await readResults<Line>(dir)).map((l) => `${l.manifest}/${l.id}`)).toEqual(["promo/intro"]);
    await withPage(page, async (p) => {
      await expect.poll(() => cardNames(p)).toEqual(["promo / intro"]);
    });
    // Nothing on disk is deleted: the videos and their records are where they were.
    for (const file of ["lake.mp4", "lake.json", "city.mp4", "city.json"]) {
      expect(existsSync(join(dir, "out", "broll", file)), file).toBe(true);
    }
    // And a run of promo again does not bring broll back.
    expect((await runCli(["run", "manifests/promo.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect((await readResults<Line>(dir)).map((l) => `${l.manifest}/${l.id}`)).toEqual(["promo/intro"]);
    expect(s.counters.generationsCreated).toBe(3);
  }, 60_000);
});
