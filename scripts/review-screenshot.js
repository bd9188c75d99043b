// docs/review.png: the review page of a real sandbox run of the example campaign
// (manifests/campaign.yaml: a matrix with takes), a few takes decided, as a reviewer sees it in
// Chromium. Run it again when the page changes:
//   npm run build && node scripts/review-screenshot.js [output.png]
// It works in a temp folder (a copy of the campaign and its media) and leaves nothing behind.
import { execFile, spawn } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(ROOT, "bin", "reel.js");
const CHROMIUM = process.env.REEL_CHROMIUM ?? "/usr/bin/chromium";
const OUTPUT = resolve(process.argv[2] ?? join(ROOT, "docs", "review.png"));
const reel = (args, cwd) => promisify(execFile)(process.execPath, [BIN, ...args], { cwd });

const tmp = await mkdtemp(join(tmpdir(), "reel-screenshot-"));
// The page's title names the project's folder.
const dir = join(tmp, "summer");
let server;
try {
  await cp(join(ROOT, "manifests", "campaign.yaml"), join(dir, "campaign", "campaign.yaml"));
  await cp(join(ROOT, "manifests", "media"), join(dir, "campaign", "media"), { recursive: true });
  const place = ["--sandbox", "--state", ".reel/state.db", "--out", "out"];
  await reel(["run", ...place, "campaign"], dir);
  const decide = ["--sandbox", "--state", ".reel/state.db", "--reviewer", "ana"];
  await reel(
    ["approve", ...decide, "summer-campaign/summer-de-anna~2", "summer-campaign/summer-de-ben~1"],
    dir,
  );
  await reel(["reject", ...decide, "--note", "smile too wide", "summer-campaign/summer-de-anna~1"], dir);
  server = spawn(process.execPath, [BIN, "review", ...place, "--reviewer", "ana", "campaign"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  server.stdout.on("data", (d) => (stdout += d));
  while (!stdout.includes("\n")) {
    if (server.exitCode !== null) throw new Error("reel review stopped");
    await sleep(20);
  }
  const url = /http:\/\/\S+/.exec(stdout)[0];
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
    await page.goto(url);
    await page.waitForSelector("body[data-ready=true]");
    await page.keyboard.press("j"); // the second video, its first take: the current one
    // Headless Chromium may hold back autoplay: the players in view are started here.
    await page.evaluate(() => {
      for (const v of document.querySelectorAll("video")) {
        v.preload = "auto";
        v.load();
        void v.play().catch(() => undefined);
      }
    });
    // The players in view loaded, so the picture shows what a reviewer sees.
    await page
      .waitForFunction(
        () =>
          [...document.querySelectorAll("video")]
            .filter((v) => v.getBoundingClientRect().top < window.innerHeight)
            .every((v) => v.readyState >= 2),
        undefined,
        { timeout: 10_000 },
      )
      .catch(() => process.stderr.write("some players in view had no frame yet\n"));
    await page.screenshot({ path: OUTPUT });
    process.stdout.write(`wrote ${OUTPUT}\n`);
  } finally {
    await browser.close();
  }
} finally {
  server?.kill("SIGINT");
  await rm(tmp, { recursive: true, force: true });
}
