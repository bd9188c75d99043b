// The parts of OUT/index.html that tell a reviewer about the run, in a real headless Chromium loaded
// from file://: the banner after a stop for credits (with the service, never the key), the totals
// as filters, sorting, source thumbnails, speech voices, and a watch's page reloading itself until
// the watch ends.
import { existsSync } from "node:fs";
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeHtmlReport } from "../../src/report/html-report.js";
import { RESULT_VIDEO_PATH } from "../../src/sandbox/index.js";
import { runCli, until, useCommands, writeTree } from "../helpers/cli.js";
import { embeddedJobs } from "../helpers/report-page.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { CHROMIUM, HAS_CHROMIUM, LAUNCH_ARGS } from "./browser.js";
import { makeRow } from "./rows.js";

const SHOP = `version: 1
name: shop
videos:
  - id: welcome
    model: avatar-h1
    resolution: 540p
    aspectRatio: "1:1"
    source: ./media/face.png
    chunks:
      - duration: 4
        speech: { voice: 17, text: "Welcome to the shop." }
  - id: door
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "the shop door opens"
`;

const oneVideo = (name: string, id: string) => `version: 1
name: ${name}
videos:
  - id: ${id}
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a presenter waves"
`;

/** The parts of an element the in-page callbacks read (the test program has no DOM types). */
interface ElementLike {
  readonly naturalWidth: number;
  readonly complete: boolean;
  getAttribute(name: string): string | null;
}

describe.skipIf(!HAS_CHROMIUM)("report page: the run, the totals, sorting, thumbnails, refresh", () => {
  const sandbox = useSandboxes();
  const command = useCommands();
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  /**
   * A page that fails the test on a script error or a blocked resource (CSP reports included); on a
   * clock of the test's (`clock`: it runs with the real one until the test moves it on).
   */
  async function openReport(file: string, clock = false): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    if (clock) await page.clock.install();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector("body[data-ready]");
    return { page, errors };
  }

  // A card shown again by a filter is filled when the browser next reports it in view (an
  // IntersectionObserver, asynchronous): the names are polled for.
  const cardNames = (page: Page) => page.locator("#cards > .card:not([hidden]) .name").allTextContents();

  it("a run stopped for credits: banner with the next step, the service, a thumbnail, the voice", async () => {
    // 4 credits: the 4 s video fits, the 5 s one does not; whichever is sent first, the run stops.
    const service = await sandbox({ credits: 4 });
    const dir = await tempDir();
    await writeTree(dir, { "shop.yaml": SHOP, "media/face.png": { fixture: "tiny.png" } });
    const run = await runCli(["run", "--out", "out", "--state", ".reel/state.db", "shop.yaml"], {
      cwd: dir,
      env: { REEL_BASE_URL: service.baseUrl, REEL_API_KEY: service.apiKey },
    });
    expect(run.code, run.stderr).toBe(3);
    const file = join(dir, "out", "index.html");
    expect(await readFile(file, "utf8")).not.toContain(service.apiKey);

    const { page, errors } = await openReport(file);
    const banner = page.locator("#banner");
    expect(await banner.isVisible()).toBe(true);
    expect(await banner.locator("strong").textContent()).toBe("Stopped: no credits left");
    expect(await banner.locator(".next").textContent()).toContain(
      "Add credits on the service's console, then run the same command again",
    );
    expect(await page.locator("#service").textContent()).toBe(service.baseUrl);
    expect(await page.locator(".meta").textContent()).toMatch(/Run started .+ · written .+/);

    const welcome = page.locator(".card", { hasText: "welcome" });
    await welcome.scrollIntoViewIfNeeded();
    const thumb = welcome.locator("img.thumb");
    expect(await thumb.getAttribute("src")).toBe("../media/face.png");
    // Loaded from the disk beside the page (the CSP lets file: images in): a real, decoded image.
    await expect
      .poll(() => thumb.evaluate((img: ElementLike) => img.complete && img.naturalWidth > 0))
      .toBe(true);
    expect(await welcome.locator(".chunks").textContent()).toContain(
      "speech, voice 17: Welcome to the shop.",
    );
    const door = page.locator(".card", { hasText: "door" });
    expect(await door.locator("img").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 30_000);

  it("a total filters the cards on click; cards sort by status or time, kept in the address", async () => {
    const out = await tempDir();
    await copyFile(RESULT_VIDEO_PATH, join(out, "result.mp4"));
    const T0 = Date.UTC(2025, 4, 1, 9, 0, 0);
    const row = (id: string, state: "Success" | "Fail" | "uncertain", minutes: number) =>
      makeRow({
        manifest: "m",
        video_id: id,
        state,
        task_status: state === "uncertain" ? null : state,
        file: state === "Success" ? "result.mp4" : null,
        error: state === "Success" ? null : "it went wrong",
        finished_at: state === "uncertain" ? null : T0 + minutes * 60_000,
        submitted_at: T0 + minutes * 60_000 - 10_000,
      });
    // Listed order: a (Fail, 09:05), b (Success, 09:01), c (uncertain, 09:03), d (Success, 09:09).
    await writeHtmlReport(
      out,
      [row("a", "Fail", 5), row("b", "Success", 1), row("c", "uncertain", 3), row("d", "Success", 9)],
      {
        run: { outcome: "completed", service: "sandbox" },
      },
    );
    const { page, errors } = await openReport(join(out, "index.html"));
    await expect.poll(() => cardNames(page)).toEqual(["m / a", "m / b", "m / c", "m / d"]);

    await page.click('button.tile[data-status="Fail"]');
    await expect.poll(() => cardNames(page)).toEqual(["m / a"]);
    expect(await page.locator("#filter-status").inputValue()).toBe("Fail");
    expect(await page.getAttribute('button.tile[data-status="Fail"]', "aria-pressed")).toBe("true");
    await page.click('button.tile[data-status="Success"]');
    await expect.poll(() => cardNames(page)).toEqual(["m / b", "m / d"]);
    await page.click('button.tile[data-status=""]');
    await expect.poll(() => cardNames(page)).toHaveLength(4);
    expect(await page.locator("#shown").textContent()).toBe("4 jobs");

    await page.selectOption("#sort", "status");
    await expect.poll(() => cardNames(page)).toEqual(["m / b", "m / d", "m / a", "m / c"]);
    await page.selectOption("#sort", "recent");
    // Latest first by the time a job finished (or was submitted, when it never finished).
    await expect.poll(() => cardNames(page)).toEqual(["m / d", "m / a", "m / c", "m / b"]);
    await page.selectOption("#sort", "oldest");
    await expect.poll(() => cardNames(page)).toEqual(["m / b", "m / c", "m / a", "m / d"]);
    expect(page.url()).toContain("sort=oldest");
    // Filter and sort together, and both survive a reload (they live in the address).
    await page.click('button.tile[data-status="Success"]');
    await page.reload();
    await page.waitForSelector("body[data-ready]");
    await expect.poll(() => cardNames(page)).toEqual(["m / b", "m / d"]);
    expect(await page.locator("#sort").inputValue()).toBe("oldest");
    await page.selectOption("#sort", "");
    await expect.poll(() => cardNames(page)).toEqual(["m / b", "m / d"]);
    await page.click("#filter-clear");
    await expect.poll(() => cardNames(page)).toEqual(["m / a", "m / b", "m / c", "m / d"]);
    expect(errors).toEqual([]);
  }, 30_000);

  // The page's clock is the test's: once the watch wrote what the page is to show, the page's own
  // timer is moved on to its next reload (3 s) rather than waited for.
  it("a watch's page reloads itself to show new jobs, and stops once the watch ends", async () => {
    const service = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "incoming/first.yaml": oneVideo("first", "one") });
    const watch = command(["watch", "--out", "out", "--state", ".reel/state.db", "incoming"], {
      cwd: dir,
      env: { REEL_BASE_URL: service.baseUrl, REEL_API_KEY: service.apiKey },
    });
    const file = join(dir, "out", "index.html");
    await until(
      async () =>
        // The totals' tile of Success jobs: the one video is done.
        existsSync(file) && (await readFile(file, "utf8")).includes('data-status="Success"'),
      "the watch's first report",
    );
    const { page, errors } = await openReport(file, true);
    expect(await page.locator("body").getAttribute("data-refresh")).toBe("3");
    expect(await page.locator("#banner strong").textContent()).toBe("Watching: reel watch is running");
    expect(await page.locator(".meta").textContent()).toMatch(/Watch started/);
    // Scrolled and filtered: both are kept across the page's own reloads.
    await page.selectOption("#filter-manifest", "first");
    await page.selectOption("#filter-manifest", "");

    await writeTree(dir, { "incoming/second.yaml": oneVideo("second", "two") });
    await until(
      async () => embeddedJobs(await readFile(file, "utf8")).some((job) => job.manifest === "second"),
      "the watch's report of the second manifest",
    );
    // No reload from the test: the page reloads itself, by its own timer.
    await page.clock.runFor(3_000);
    await expect.poll(() => cardNames(page).catch(() => []), { timeout: 20_000 }).toContain("second / two");

    const stopped = await watch.stop();
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(await readFile(file, "utf8")).not.toContain("data-refresh=");
    await page.clock.runFor(3_000);
    await expect
      .poll(
        () =>
          page
            .locator("#banner strong")
            .textContent()
            .catch(() => ""),
        { timeout: 10_000 },
      )
      .toBe("The watch has stopped");
    await page.waitForSelector("body[data-ready]");
    expect(await page.locator("body").getAttribute("data-refresh")).toBeNull();
    // And it reloads no more: a mark left on this page is still there once the page's clock is past
    // its refresh period (a page that reloads sets its timer of 3 s as it loads). A reload the timer
    // began is seen at once (beforeunload), not only once it replaced the page.
    await page.evaluate(
      "window.reelTestMark = 1; addEventListener('beforeunload', () => { window.reelTestMark = 2; })",
    );
    await page.clock.runFor(4_500);
    expect(await page.evaluate("window.reelTestMark")).toBe(1);
    expect(errors).toEqual([]);
  }, 60_000);
});
