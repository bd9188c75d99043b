// docs/report.png: the report of a real sandbox run of the README's demo (manifests/mixed.yaml), as
// a reviewer sees it in Chromium. Run it again when the page changes:
//   npm run build && node scripts/report-screenshot.js [output.png]
// It works in a temp folder (a copy of the demo manifest and its media) and leaves nothing behind.
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CHROMIUM = process.env.REEL_CHROMIUM ?? "/usr/bin/chromium";
const OUTPUT = resolve(process.argv[2] ?? join(ROOT, "docs", "report.png"));

const dir = await mkdtemp(join(tmpdir(), "reel-screenshot-"));
try {
  await cp(join(ROOT, "manifests", "mixed.yaml"), join(dir, "campaign", "mixed.yaml"));
  await cp(join(ROOT, "manifests", "media"), join(dir, "campaign", "media"), { recursive: true });
  await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, "bin", "reel.js"),
      "run",
      "--sandbox",
      "--out",
      "out",
      "--state",
      ".reel/state.db",
      "campaign",
    ],
    { cwd: dir },
  );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: "light" });
    await page.goto(pathToFileURL(join(dir, "out", "index.html")).href);
    await page.waitForSelector("body[data-ready]");
    // Every thumbnail and the first row of videos loaded, so the picture shows what a reviewer sees.
    await page.waitForFunction(() =>
      [...document.querySelectorAll("img.thumb")].every((img) => img.complete && img.naturalWidth > 0),
    );
    await page.waitForFunction(() => [...document.querySelectorAll("video")].every((v) => v.readyState >= 2));
    await page.screenshot({ path: OUTPUT });
    process.stdout.write(`wrote ${OUTPUT}\n`);
  } finally {
    await browser.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
