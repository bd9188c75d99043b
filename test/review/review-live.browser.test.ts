// More of the review page in a real headless Chromium, each served by a real `reel review` process:
// a matrix's variables shown and filtered by (PATH limiting the page to its manifests), the page
// asking for the reviewer's name, a decision surviving a restart of the server, a new take arriving
// while a `reel watch` runs, and two review servers on one PostgreSQL store.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { CHROMIUM, HAS_CHROMIUM, LAUNCH_ARGS } from "../report/browser.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();
const database = usePostgres();

const PROMO = `version: 1
name: promo
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: promo-{lang}-{face}
    matrix:
      lang: [en, de]
      face: [{ face: anna, line: "hello" }, { face: ben, line: "hi" }]
    takes: 2
    chunks:
      - duration: 5
        text: "{face} says {line} in {lang}"
`;

const OTHER = `version: 1
name: other
defaults:
  model: actor-2
videos:
  - id: spot-{size}
    matrix:
      size: [s, m]
    chunks:
      - duration: 5
        text: "a spot, size {size}"
`;

const SHOP = `version: 1
name: shop
defaults:
  model: actor-2
videos:
  - id: lamp
    chunks:
      - duration: 5
        text: "a lamp turns on"
`;

const SHOP2 = `${SHOP}  - id: mug
    takes: 2
    chunks:
      - duration: 5
        text: "a mug"
`;

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

describe.skipIf(!HAS_CHROMIUM)("reel review in Chromium: variables, reviewer, restarts, live", () => {
  let browser: Browser;
  const pages: Page[] = [];
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.context().close();
  });

  /** A `reel review` process (a real one) in `dir`, and its address once printed. */
  async function serve(dir: string, argv: string[], environment: Record<string, string>) {
    const server = reel(["review", ...argv], dir, environment);
    let stdout = "";
    server.child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    await until(() => stdout.includes("\n") || server.child.exitCode !== null, "the review address");
    const url = /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(stdout)?.[0];
    expect(url, server.stderr()).toBeDefined();
    return { server, url: url! };
  }

  async function open(url: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    pages.push(page);
    await page.goto(url);
    await page.locator("body[data-ready=true]").waitFor();
    return page;
  }

  const videos = (p: Page) =>
    p.locator("section.video").evaluateAll((els) => els.map((e) => e.getAttribute("data-video")));
  const jobs = (p: Page) =>
    p.locator("figure.take").evaluateAll((els) => els.map((e) => e.getAttribute("data-job")));
  const decision = (p: Page, job: string) =>
    p.locator(`figure.take[data-job="${job}"] .decision`).textContent();

  it("shows each video's matrix variables and filters by them; PATH limits the page to its manifests; a gone manifest's jobs still show", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": PROMO, "other.yaml": OTHER });
    const run = await runCli(["run", "promo.yaml", "other.yaml"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    await rm(join(dir, "other.yaml"));

    const all = await open((await serve(dir, [], { ...env(s), REEL_REVIEWER: "ana" })).url);
    expect(await videos(all)).toEqual([
      "other/spot-m",
      "other/spot-s",
      "promo/promo-de-anna",
      "promo/promo-de-ben",
      "promo/promo-en-anna",
      "promo/promo-en-ben",
    ]);
    // Every placeholder of its combination, as the delivery sheet has them: a zipped axis gives two.
    expect(await all.locator('section[data-video="promo/promo-de-ben"] .var').allTextContents()).toEqual([
      "lang de",
      "face ben",
      "line hi",
    ]);
    // other.yaml is gone: its jobs show, without variables.
    expect(await all.locator('section[data-video="other/spot-m"] .var').count()).toBe(0);
    await all.selectOption('select[data-var="lang"]', "de");
    await all.selectOption('select[data-var="face"]', "ben");
    expect(await jobs(all)).toEqual(["promo/promo-de-ben~1", "promo/promo-de-ben~2"]);
    await all.selectOption('select[data-var="face"]', "");
    expect(await videos(all)).toEqual(["promo/promo-de-anna", "promo/promo-de-ben"]);

    const limited = await open((await serve(dir, ["promo.yaml"], { ...env(s), REEL_REVIEWER: "ana" })).url);
    expect(await videos(limited)).toEqual([
      "promo/promo-de-anna",
      "promo/promo-de-ben",
      "promo/promo-en-anna",
      "promo/promo-en-ben",
    ]);
  });

  it("asks for the reviewer's name when none is given, records it, and asks once", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "shop.yaml": SHOP });
    expect((await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const p = await open((await serve(dir, [], env(s))).url);
    const asked: string[] = [];
    p.on("dialog", (dialog) => {
      asked.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.accept("zoe");
    });
    await p.keyboard.press("a");
    await expect.poll(() => decision(p, "shop/lamp")).toBe("approved by zoe");
    await p.keyboard.press("u");
    await expect.poll(() => decision(p, "shop/lamp")).toBe("undecided");
    expect(asked).toEqual(["prompt: Your name, recorded with each decision:"]);
    expect(await p.locator("#who").textContent()).toBe("reviewer: zoe");
  });

  it("keeps a decision across a restart of the review server", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "shop.yaml": SHOP });
    expect((await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const first = await serve(dir, [], { ...env(s), REEL_REVIEWER: "ana" });
    const p = await open(first.url);
    await p.keyboard.press("r");
    await p.locator("#note").fill("too dim");
    await p.keyboard.press("Enter");
    await expect.poll(() => decision(p, "shop/lamp")).toBe("rejected by ana: too dim");
    first.server.child.kill("SIGINT");
    expect(await first.server.exit).toBe(0);

    const again = await open((await serve(dir, [], { ...env(s), REEL_REVIEWER: "bob" })).url);
    expect(await decision(again, "shop/lamp")).toBe("rejected by ana: too dim");
  });

  it("shows a new take while a reel watch makes it, without a reload", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "incoming/shop.yaml": SHOP });
    const watch = reel(["watch", "incoming", "--settle", "100ms"], dir, env(s));
    await until(() => existsMp4(dir, "lamp"), "the watch to make lamp");
    const p = await open((await serve(dir, [], { ...env(s), REEL_REVIEWER: "ana" })).url);
    await p.locator("body[data-live=true]").waitFor();
    expect(await videos(p)).toEqual(["shop/lamp"]);
    await writeTree(dir, {
      "incoming/shop.yaml": `${SHOP}  - id: mug\n    chunks:\n      - duration: 5\n        text: "a mug"\n`,
    });
    await p.locator('figure.take[data-job="shop/mug"] video').waitFor({ timeout: 15_000 });
    expect(await videos(p)).toEqual(["shop/lamp", "shop/mug"]);
    watch.child.kill("SIGINT");
    expect(await watch.exit).toBe(0);
  });

  it("two review servers on one PostgreSQL store see each other's decisions", async (context) => {
    const url = await database(context);
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "shop.yaml": SHOP2 });
    const store = { ...env(s), REEL_STORE: url };
    expect((await runCli(["run", "shop.yaml"], { cwd: dir, env: store })).code).toBe(0);
    // Two reviewers on two machines: two folders with neither manifests nor a state file.
    const [here, there] = [await tempDir(), await tempDir()];
    const ana = await open((await serve(here, [], { ...store, REEL_REVIEWER: "ana" })).url);
    const bob = await open((await serve(there, [], { ...store, REEL_REVIEWER: "bob" })).url);
    await Promise.all([ana, bob].map((p) => p.locator("body[data-live=true]").waitFor()));
    await ana.keyboard.press("a"); // lamp
    // Recorded (ana's own page says so) before bob's page is asked: a slow machine's delay of the
    // first is no part of the second's claim.
    await expect.poll(() => decision(ana, "shop/lamp")).toBe("approved by ana");
    await expect.poll(() => decision(bob, "shop/lamp")).toBe("approved by ana");
    await bob.keyboard.press("j");
    await bob.keyboard.press("l"); // mug~2
    await bob.keyboard.press("r");
    await bob.locator("#note").fill("blinks");
    await bob.keyboard.press("Enter");
    await expect.poll(() => decision(ana, "shop/mug~2")).toBe("rejected by bob: blinks");
  });
});

function existsMp4(dir: string, id: string): boolean {
  return existsSync(join(dir, "out", "shop", `${id}.mp4`));
}
