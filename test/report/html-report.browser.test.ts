// OUT/index.html in a real headless Chromium (Debian's `chromium`, driven by playwright-core), loaded
// from file:// as a reviewer opens it: after a real sandbox run, and with 2,000 made-up jobs.
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeHtmlReport } from "../../src/report/html-report.js";
import { RESULT_VIDEO_PATH, type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { REPO, runCli, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";
import { CHROMIUM, HAS_CHROMIUM, LAUNCH_ARGS } from "./browser.js";
import { makeRow, manyRows } from "./rows.js";

const ARTIFACTS = join(REPO, "test-artifacts");

const HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>";

const SPRING = `version: 1
name: spring
defaults:
  aspectRatio: "16:9"
videos:
  - id: intro
    model: actor-1
    resolution: 720p
    source: ./media/face.png
    chunks:
      - duration: 5
        text: "a presenter waves at the camera"
  - id: chef
    model: actor-2
    resolution: 1080p
    chunks:
      - duration: 10
        text: "a chef tastes the soup and smiles"
        audio: ./media/voice.wav
  - id: cat
    model: actor-4
    resolution: 540p
    chunks:
      - duration: 5
        text: "a cat stretches on a sunny sofa"
  - id: welcome
    model: avatar-h1
    resolution: 540p
    aspectRatio: "1:1"
    source: ./media/face.png
    chunks:
      - duration: 4
        speech: { voice: 17, text: "Welcome to the spring collection." }
  - id: missing-face
    model: actor-1
    resolution: 720p
    source: { asset: 999 }
    chunks:
      - duration: 5
        text: "a model turns around"
`;

const HOSTILE_MANIFEST = `version: 1
name: zz-hostile
videos:
  - id: xss
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "${HOSTILE}"
`;

/**
 * The part of HTMLVideoElement the checks read. The test program has no DOM types (tsconfig's lib is
 * ES2023 only, which keeps browser globals out of the Node code), so in-page callbacks name their own.
 */
interface VideoLike {
  readonly readyState: number;
  readonly error: { readonly code: number } | null;
  readonly videoWidth: number;
  getAttribute(name: string): string | null;
}

/** What a page did that it should not: dialogs opened, uncaught errors, console errors (CSP reports included). */
interface PageTrouble {
  dialogs: string[];
  errors: string[];
}

describe.skipIf(!HAS_CHROMIUM)(
  HAS_CHROMIUM
    ? `report page in headless Chromium (${CHROMIUM})`
    : `report page in Chromium: SKIPPED, no browser at ${CHROMIUM} (apt-get install chromium, or set REEL_CHROMIUM)`,
  () => {
    let browser: Browser;
    const contexts: BrowserContext[] = [];
    const sandboxes: Sandbox[] = [];

    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
      await mkdir(ARTIFACTS, { recursive: true });
    }, 30_000);
    afterAll(async () => {
      await browser?.close();
    });
    afterEach(async () => {
      await Promise.all(contexts.splice(0).map((c) => c.close()));
      await Promise.all(sandboxes.splice(0).map((s) => s.close()));
    });

    async function openPage(): Promise<{ page: Page; trouble: PageTrouble }> {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      contexts.push(context);
      const page = await context.newPage();
      const trouble: PageTrouble = { dialogs: [], errors: [] };
      page.on("dialog", (dialog) => {
        trouble.dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      page.on("pageerror", (error) => trouble.errors.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error") trouble.errors.push(message.text());
      });
      return { page, trouble };
    }

    /**
     * The first filter interaction, as soon as the page says it is ready: real key events into the
     * search box. Only main-world evaluation and CDP input are used because Playwright's selector
     * engine takes a few hundred ms to inject into a fresh page, which is the harness's time.
     */
    async function typeFirstFilter(page: Page, text: string): Promise<void> {
      while (!(await page.evaluate("document.body?.dataset.ready === 'true'"))) await sleep(5);
      await page.evaluate("document.getElementById('filter-text').focus()");
      await page.keyboard.type(text);
    }

    const visibleCards = (page: Page) => page.locator("#cards > .card:not([hidden]) .name").allTextContents();

    it("shows a sandbox run: summary, playable videos, filters, and a hostile prompt as text", async () => {
      const sandbox = await startSandbox({ timeScale: 0.01, preProcessingMs: 5, slots: 8 });
      sandboxes.push(sandbox);
      const dir = await tempDir();
      await writeTree(dir, {
        "manifests/spring.yaml": SPRING,
        "manifests/zz-hostile.yaml": HOSTILE_MANIFEST,
        "manifests/media/face.png": { fixture: "tiny.png" },
        "manifests/media/voice.wav": { fixture: "tiny.wav" },
      });
      const run = await runCli(["run", "manifests"], {
        cwd: dir,
        env: { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey },
      });
      expect(run.code, run.stderr).toBe(1); // missing-face fails: its source asset does not exist
      const out = join(dir, "out");
      // `reel run` writes the page itself.
      expect(existsSync(join(out, "index.html"))).toBe(true);

      const { page, trouble } = await openPage();
      await page.goto(pathToFileURL(join(out, "index.html")).href);
      await page.waitForSelector("body[data-ready]");

      // Summary: counts by status, per manifest and in all.
      const footer = await page.locator("#summary tfoot td").allTextContents();
      const header = await page.locator("#summary thead th").allTextContents();
      expect(header).toEqual(["manifest", "jobs", "Success", "Fail", "video done / all"]);
      expect(footer.slice(0, 4)).toEqual(["all manifests", "6", "5", "1"]);
      expect(footer[4]).toBe("29 s / 34 s");
      expect(await page.locator("#summary tbody tr").count()).toBe(2);
      expect(await visibleCards(page)).toHaveLength(6);

      // The failure shows its error; links point at the job record and results.jsonl.
      const failed = page.locator(".card", { hasText: "missing-face" });
      await expect.poll(() => failed.locator(".error").textContent()).toContain("asset 999 not found");
      expect(await failed.locator(".links a").first().getAttribute("href")).toBe("spring/missing-face.json");
      expect(await page.locator('a[href="results.jsonl"]').count()).toBeGreaterThan(0);
      const record = JSON.parse(await readFile(join(out, "spring", "missing-face.json"), "utf8"));
      expect(record.status).toBe("Fail");

      // Every successful job's video loads once its card is in view: readyState >= 2 (HAVE_CURRENT_DATA).
      const successCards = page.locator(".card.s-success");
      expect(await successCards.count()).toBe(5);
      for (let i = 0; i < 5; i++) {
        const card = successCards.nth(i);
        await card.scrollIntoViewIfNeeded();
        const video = card.locator("video");
        await video.waitFor({ state: "attached", timeout: 10_000 });
        await expect
          .poll(() => video.evaluate((el: VideoLike) => el.readyState >= 2 || el.error !== null), {
            timeout: 10_000,
          })
          .toBe(true);
        const state = await video.evaluate((el: VideoLike) => ({
          readyState: el.readyState,
          error: el.error?.code ?? null,
          src: el.getAttribute("src"),
          width: el.videoWidth,
        }));
        expect(state.src).toMatch(/^(spring|zz-hostile)\/[\w-]+\.mp4$/);
        // error 4 would mean this Chromium cannot decode H.264 (the sandbox's one-frame clips,
        // stretched to the job's length); the width is the one the job's resolution asks for.
        expect(state, "video should decode in this Chromium").toMatchObject({
          readyState: expect.any(Number),
          error: null,
        });
        expect([540, 720, 960, 1080, 1280, 1920]).toContain(state.width);
        expect(state.readyState).toBeGreaterThanOrEqual(2);
      }

      // Filters: by status, by manifest, by text; videos already loaded are kept, not re-created.
      const firstVideo = await page.locator("video").first().elementHandle();
      await page.selectOption("#filter-status", "Fail");
      expect(await visibleCards(page)).toEqual(["spring / missing-face"]);
      await expect.poll(() => page.locator("#shown").textContent()).toBe("1 of 6 jobs shown");
      await page.selectOption("#filter-status", "");
      await page.selectOption("#filter-manifest", "zz-hostile");
      expect(await visibleCards(page)).toEqual(["zz-hostile / xss"]);
      await page.selectOption("#filter-manifest", "");
      await page.fill("#filter-text", "SOUP");
      expect(await visibleCards(page)).toEqual(["spring / chef"]);
      await page.fill("#filter-text", "spring collection");
      expect(await visibleCards(page)).toEqual(["spring / welcome"]);
      expect(page.url()).toContain("#q=spring+collection");
      await page.fill("#filter-text", "no such words");
      expect(await visibleCards(page)).toEqual([]);
      expect(await page.locator("#empty").isVisible()).toBe(true);
      await page.click("#filter-clear");
      expect(await visibleCards(page)).toHaveLength(6);
      const firstNow = await page.locator("video").first().elementHandle();
      expect(await firstVideo!.evaluate((el, other) => el === other, firstNow)).toBe(true);
      expect(await firstVideo!.evaluate((el: VideoLike) => el.readyState)).toBeGreaterThanOrEqual(2);

      // The hostile prompt is shown as text and runs nothing.
      const hostile = page.locator(".card", { hasText: "xss" });
      await hostile.scrollIntoViewIfNeeded();
      expect(await hostile.locator(".chunks").textContent()).toContain(HOSTILE);
      await page.waitForTimeout(200); // time for an injected onerror to fire, were there one
      expect(await page.locator("script").count()).toBe(2);
      expect(await page.locator("iframe, object, embed").count()).toBe(0);
      // The only images are the source thumbnails the page makes itself, linked beside the page.
      const images = await page
        .locator("img")
        .evaluateAll((nodes: VideoLike[]) =>
          nodes.map((n) => `${n.getAttribute("class")} ${n.getAttribute("src")}`),
        );
      for (const image of images) expect(image).toBe("thumb ../manifests/media/face.png");
      expect(trouble.dialogs).toEqual([]);
      expect(trouble.errors).toEqual([]);

      await page.locator("h1").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, "report.png") });
      await page.screenshot({ path: join(ARTIFACTS, "report-full.png"), fullPage: true });
    }, 30_000);

    it("shows each take's decision on its card, a note as text, and finds it by search", async () => {
      const out = await tempDir();
      const rows = [
        makeRow({ manifest: "shop", video_id: "mug~1", spec_hash: "1".repeat(64), file: null }),
        makeRow({ manifest: "shop", video_id: "mug~2", spec_hash: "2".repeat(64), file: null }),
        makeRow({ manifest: "shop", video_id: "lamp", spec_hash: "3".repeat(64), file: null }),
      ];
      const decided = (
        key: string,
        hash: string,
        decision: "approved" | "rejected",
        note: string | null,
      ) => ({
        id: 1,
        baseUrl: "x",
        key,
        specHash: hash,
        decision,
        reviewer: "ana",
        note,
        decidedAt: Date.UTC(2025, 4, 2),
      });
      const decisions = new Map([
        [`shop/mug~1\n${"1".repeat(64)}`, decided("shop/mug~1", "1".repeat(64), "approved", null)],
        [`shop/mug~2\n${"2".repeat(64)}`, decided("shop/mug~2", "2".repeat(64), "rejected", HOSTILE)],
      ]);
      await writeHtmlReport(out, rows, { title: "decisions", decisions });
      const { page, trouble } = await openPage();
      await page.goto(pathToFileURL(join(out, "index.html")).href);
      const decisionOf = (id: string) =>
        page
          .locator(".card", { has: page.locator(".id", { hasText: new RegExp(`^${id}$`) }) })
          .locator(".decision");
      await expect.poll(() => decisionOf("mug~1").textContent()).toBe("approved by ana");
      expect(await decisionOf("mug~2").textContent()).toBe(`rejected by ana: ${HOSTILE}`);
      expect(await decisionOf("mug~2").getAttribute("title")).toBe("decided 2025-05-02T00:00:00.000Z");
      expect(await decisionOf("lamp").count()).toBe(0);
      await page.fill("#filter-text", "rejected");
      expect(await visibleCards(page)).toEqual(["shop / mug~2"]);
      expect(trouble).toEqual({ dialogs: [], errors: [] });
    }, 30_000);

    it("becomes interactive within the bound with 2,000 jobs, loading only the videos in view", async () => {
      const out = await tempDir();
      await copyFile(RESULT_VIDEO_PATH, join(out, "result.mp4"));
      await writeHtmlReport(out, manyRows(2_000, "result.mp4"), { title: "2,000 jobs" });
      const { page, trouble } = await openPage();

      await page.goto(pathToFileURL(join(out, "index.html")).href, { waitUntil: "commit" });
      await typeFirstFilter(page, "v19");
      // v19, v190..v199, v1900..v1999
      await expect.poll(() => page.locator("#shown").textContent()).toBe("111 of 2000 jobs shown");
      const timing = await page.evaluate(() => ({
        ready: performance.getEntriesByName("reel-ready")[0]?.startTime ?? -1,
        filtered: performance.getEntriesByName("reel-filtered")[0]?.startTime ?? -1,
      }));
      // The bench (bench/report-bench.js) reports the figure; CI machines are noisy, so the bound is wide.
      expect(timing.ready).toBeGreaterThan(0);
      expect(timing.filtered).toBeGreaterThan(0);
      expect(timing.filtered).toBeLessThan(10_000);

      await page.fill("#filter-text", "");
      await page.selectOption("#filter-status", "Fail");
      expect(await page.locator("#shown").textContent()).toBe("286 of 2000 jobs shown");
      await page.selectOption("#filter-status", "");
      // Only cards near the viewport have a player; the rest fetch nothing.
      const players = await page.locator("video").count();
      expect(players).toBeGreaterThan(0);
      expect(players).toBeLessThan(40);
      // Cards far from the viewport are still empty shells: the DOM stays small.
      expect(await page.locator(".card:not(.shell)").count()).toBeLessThan(100);
      await page.locator(".card").nth(1_500).scrollIntoViewIfNeeded();
      await expect.poll(() => page.locator(".card").nth(1_500).locator("video").count()).toBe(1);
      expect(await page.locator("video").count()).toBeLessThan(80);
      expect(trouble).toEqual({ dialogs: [], errors: [] });
    }, 30_000);

    it("opens 100,000 jobs a page at a time, and a search finds a job deep in the list", async () => {
      const out = await tempDir();
      await copyFile(RESULT_VIDEO_PATH, join(out, "result.mp4"));
      await writeHtmlReport(out, manyRows(100_000, "result.mp4"), { title: "100,000 jobs" });
      const { page, trouble } = await openPage();

      await page.goto(pathToFileURL(join(out, "index.html")).href, { waitUntil: "commit" });
      while (!(await page.evaluate("document.body?.dataset.ready === 'true'"))) await sleep(10);
      // The first page: 2,000 cards, most of them empty shells; the document stays small.
      const first = (await page.evaluate(`({
        ready: performance.getEntriesByName("reel-ready")[0]?.startTime ?? -1,
        cards: document.querySelectorAll("#cards > .card").length,
        elements: document.getElementsByTagName("*").length,
      })`)) as { ready: number; cards: number; elements: number };
      expect(first.cards).toBe(2_000);
      expect(first.elements).toBeLessThan(10_000);
      // bench/report-bench.js reports the figure; the bound is wide for busy machines.
      expect(first.ready).toBeLessThan(15_000);
      expect(await page.locator("#shown").textContent()).toBe("100000 jobs");
      expect(await page.locator("#page-at").textContent()).toBe("page 1 of 50 (1-2000)");
      expect(await visibleCards(page).then((names) => names.slice(0, 2))).toEqual([
        "campaign-0 / v0",
        "campaign-1 / v1",
      ]);

      // The next page, then a search for the last job: found, alone, on the first page.
      await page.click("#page-next");
      expect(await page.locator("#page-at").textContent()).toBe("page 2 of 50 (2001-4000)");
      expect((await visibleCards(page))[0]).toBe("campaign-0 / v2000");
      expect(page.url()).toContain("#page=2");
      const typed = await page.evaluate("performance.now()");
      await page.fill("#filter-text", "v99999");
      await expect.poll(() => page.locator("#shown").textContent()).toBe("1 of 100000 jobs shown");
      const searched = await page.evaluate(
        (after) =>
          performance.getEntriesByName("reel-filtered").find((m) => m.startTime >= after)?.startTime ?? -1,
        typed as number,
      );
      expect(searched - (typed as number)).toBeLessThan(5_000);
      expect(await visibleCards(page)).toEqual(["campaign-4 / v99999"]);
      expect(await page.locator("#pager").isVisible()).toBe(false);

      // Filters still count every job: the failed ones are 14,286 (one in seven), on 8 pages.
      await page.fill("#filter-text", "");
      await page.selectOption("#filter-status", "Fail");
      expect(await page.locator("#shown").textContent()).toBe("14286 of 100000 jobs shown");
      expect(await page.locator("#page-at").textContent()).toBe("page 1 of 8 (1-2000)");
      expect(trouble).toEqual({ dialogs: [], errors: [] });
    }, 60_000);
  },
);
