// The review page in a real headless Chromium (Debian's `chromium`, through playwright-core), served
// by a real `reel review` process after a real run on the sandbox: deciding by keyboard, a retake
// sent once by the next run, a filter, a reload, and a decision made by `reel approve` in another
// process arriving without a reload.
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { CHROMIUM, HAS_CHROMIUM, LAUNCH_ARGS } from "../report/browser.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();

const SHOP = `version: 1
name: shop
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: lamp
    chunks:
      - duration: 5
        text: "a lamp turns on"
  - id: mug
    takes: 2
    chunks:
      - duration: 5
        text: "a mug on a table"
`;

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

interface StatusJob {
  id: string;
  status: string;
  decision: string | null;
  reviewer: string | null;
  note: string | null;
}

async function statusJobs(dir: string, s: Sandbox): Promise<StatusJob[]> {
  const result = await runCli(["status", "--json"], { cwd: dir, env: env(s) });
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { jobs: StatusJob[] }).jobs;
}

describe.skipIf(!HAS_CHROMIUM)("reel review in Chromium", () => {
  let browser: Browser;
  let page: Page | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await page?.context().close();
    page = undefined;
  });

  /** A run of shop on the sandbox, `reel review` (a real process) on it, and the page open. */
  async function reviewing(s: Sandbox) {
    const dir = await tempDir();
    await writeTree(dir, { "shop.yaml": SHOP });
    const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    const server = reel(["review"], dir, { ...env(s), REEL_REVIEWER: "ana" });
    let stdout = "";
    server.child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    await until(() => stdout.includes("\n") || server.child.exitCode !== null, "the review address");
    const url = /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(stdout)?.[0];
    expect(url, server.stderr()).toBeDefined();
    const context = await browser.newContext();
    page = await context.newPage();
    await page.goto(url!);
    expect(page.url()).not.toContain("token"); // dropped from the address by the redirect
    await page.locator("figure.take").nth(2).waitFor();
    return { dir, page, url: url! };
  }

  const take = (p: Page, job: string) => p.locator(`figure.take[data-job="${job}"]`);

  it("approves and rejects with a note by keyboard, filters, and keeps the decisions across a reload", async () => {
    const s = await sandbox();
    const { dir, page: p } = await reviewing(s);
    // Grouped by video, the takes side by side with their seeds; players muted and looping.
    expect(
      await p.locator("section.video").evaluateAll((els) => els.map((e) => e.getAttribute("data-video"))),
    ).toEqual(["shop/lamp", "shop/mug"]);
    await expect
      .poll(() => take(p, "shop/mug~2").locator(".info").textContent())
      .toMatch(/~2 · seed \d+ · Success/);
    const video = take(p, "shop/mug~1").locator("video");
    expect(
      await video.evaluate((v) => [(v as { muted: boolean }).muted, (v as { loop: boolean }).loop]),
    ).toEqual([true, true]);

    await p.keyboard.press("a"); // lamp, the first video's first take
    await p.keyboard.press("j"); // mug~1
    await p.keyboard.press("l"); // mug~2
    await p.keyboard.press("r");
    await p.locator("#note").fill("smile too wide");
    await p.keyboard.press("Enter");
    await expect
      .poll(() => take(p, "shop/mug~2").locator(".decision").textContent())
      .toBe("rejected by ana: smile too wide");
    expect(await take(p, "shop/lamp").locator(".decision").textContent()).toBe("approved by ana");
    const jobs = await statusJobs(dir, s);
    expect(jobs.map((j) => [j.id, j.decision, j.reviewer, j.note])).toEqual([
      ["lamp", "approved", "ana", null],
      ["mug~1", null, null, null],
      ["mug~2", "rejected", "ana", "smile too wide"],
    ]);

    await p.click('[data-filter="undecided"]');
    expect(
      await p.locator("figure.take").evaluateAll((els) => els.map((e) => e.getAttribute("data-job"))),
    ).toEqual(["shop/mug~1"]);

    // Undo the rejection of mug~2: undecided again.
    await p.click('[data-filter="all"]');
    await p.keyboard.press("j");
    await p.keyboard.press("l");
    await p.keyboard.press("u");
    await expect.poll(() => take(p, "shop/mug~2").locator(".decision").textContent()).toBe("undecided");

    await p.reload();
    await take(p, "shop/lamp").locator(".decision").waitFor();
    await expect.poll(() => take(p, "shop/lamp").locator(".decision").textContent()).toBe("approved by ana");
  });

  it("retakes after a confirmation (paid), and the next run sends it exactly once", async () => {
    const s = await sandbox();
    const { dir, page: p } = await reviewing(s);
    const before = s.counters.generationsCreated;
    let asked = "";
    p.once("dialog", (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await p.keyboard.press("j"); // mug~1
    await p.keyboard.press("t");
    await expect.poll(() => p.locator("#message").textContent()).toContain("queued shop/mug~3");
    expect(asked).toContain("a paid generation");
    expect(s.counters.generationsCreated).toBe(before); // nothing paid by the page

    const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(before + 1);
    const again = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(again.code, again.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(before + 1);
    // The new take arrives on the page without a reload, its video with it.
    await take(p, "shop/mug~3").locator("video").waitFor();
    expect(await take(p, "shop/mug~1").locator(".decision").textContent()).toBe("rejected by ana");
  });

  it("shows a decision made by reel approve in another process without a reload", async () => {
    const s = await sandbox();
    const { dir, page: p } = await reviewing(s);
    await p.locator("body[data-live=true]").waitFor();
    const approve = await runCli(["approve", "shop/mug~2", "--reviewer", "bob"], { cwd: dir, env: env(s) });
    expect(approve.code, approve.stderr).toBe(0);
    await expect.poll(() => take(p, "shop/mug~2").locator(".decision").textContent()).toBe("approved by bob");
  });
});
