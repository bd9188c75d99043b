// Report page benchmark of issue 6: how fast OUT/index.html with 2,000 jobs becomes interactive in
// headless Chromium. Prints figures; asserts nothing (CI machines are noisy; the test's bound is wide).
//   npx tsc -p tsconfig.build.json && node bench/report-bench.js [jobs] [runs]
// "interactive" = from navigation start to the end of the first filter change (a key typed into the
// search box as soon as the page says it is ready); the page sets the performance marks `reel-ready`
// and `reel-filtered` itself, so the figures are the browser's clock, not the harness's.
import { existsSync } from "node:fs";
import { copyFile, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { renderHtmlReport, writeHtmlReport } from "../dist/report/html-report.js";
import { RESULT_VIDEO_PATH } from "../dist/sandbox/index.js";

const CHROMIUM = process.env.REEL_CHROMIUM ?? "/usr/bin/chromium";
const JOBS = Number(process.argv[2] ?? 2_000);
const RUNS = Number(process.argv[3] ?? 7);
const STATES = ["Success", "Success", "Success", "Success", "Fail", "uncertain", "submitted"];
const T0 = Date.UTC(2025, 4, 1, 9, 0, 0);

/** Rows shaped like the state file's, as test/report/rows.ts makes them. */
function rows(count) {
  return Array.from({ length: count }, (_, i) => {
    const state = STATES[i % STATES.length];
    const manifest = `campaign-${i % 5}`;
    const spec = {
      model: i % 3 ? "actor-2" : "avatar-h1",
      resolution: "720p",
      aspectRatio: i % 4 ? "16:9" : "9:16",
      chunks: [
        { duration: 5, text: `take ${i}: a presenter walks through the spring collection` },
        { duration: 3, audio: { kind: "speech", voiceId: "17", text: `line ${i} of the voice-over` } },
      ],
    };
    return {
      id: i + 1,
      job_key: `${manifest}/v${i}`,
      manifest,
      video_id: `v${i}`,
      spec_hash: "0".repeat(64),
      spec_json: JSON.stringify(spec),
      seconds: 8,
      model: spec.model,
      state,
      fail_kind: state === "Fail" ? "task" : null,
      attempts: 1,
      task_id: String(1800000000000000001n + BigInt(i)),
      task_status: state === "submitted" ? "Running" : state,
      result_url: null,
      file: state === "Success" ? "result.mp4" : null,
      error: state === "Fail" ? "the source image could not be decoded" : null,
      created_at: T0,
      submitted_at: T0 + 1_000,
      running_at: T0 + 2_000,
      finished_at: T0 + 12_000,
      downloaded_at: T0 + 13_000,
      updated_at: T0 + 13_000,
    };
  });
}

/**
 * Waits for the page's own "ready" flag, then types into the search box with real key events. Only
 * main-world evaluations and CDP input are used: Playwright's selector engine costs a few hundred ms
 * to inject into a fresh page, which is the harness's time, not the page's.
 */
async function firstFilter(page) {
  while (!(await page.evaluate("document.body?.dataset.ready === 'true'"))) await sleep(5);
  await page.evaluate("document.getElementById('filter-text').focus()");
  await page.keyboard.type("v19");
  await page.waitForFunction(() => performance.getEntriesByName("reel-filtered").length > 0);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  if (!existsSync(CHROMIUM)) {
    console.error(`no browser at ${CHROMIUM}: apt-get install chromium, or set REEL_CHROMIUM`);
    process.exitCode = 1;
    return;
  }
  const out = await mkdtemp(join(tmpdir(), "reel-report-bench-"));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const data = rows(JOBS);
    const renderStart = performance.now();
    renderHtmlReport(data);
    const renderMs = performance.now() - renderStart;
    await copyFile(RESULT_VIDEO_PATH, join(out, "result.mp4"));
    await writeHtmlReport(out, data);
    const size = (await stat(join(out, "index.html"))).size;
    const url = pathToFileURL(join(out, "index.html")).href;

    const samples = [];
    for (let run = 0; run < RUNS; run++) {
      // A fresh context each time: no cache, like a reviewer opening the file after a run.
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const page = await context.newPage();
      await page.goto(url, { waitUntil: "commit" });
      await firstFilter(page);
      const t = await page.evaluate(() => {
        const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? Number.NaN;
        const paint = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? Number.NaN;
        return {
          ready: mark("reel-ready"),
          filtered: mark("reel-filtered"),
          fcp: paint,
          players: document.querySelectorAll("video").length,
          nodes: document.getElementsByTagName("*").length,
        };
      });
      samples.push(t);
      await context.close();
    }
    const col = (key) => samples.map((s) => s[key]);
    const fmt = (ms) => `${ms.toFixed(0)} ms`;
    console.log(`report page, ${JOBS} jobs, ${RUNS} loads from file:// in ${CHROMIUM}`);
    console.log(`  page: ${(size / 1024).toFixed(0)} KiB, rendered in Node in ${fmt(renderMs)}`);
    console.log(`  elements: ${samples[0].nodes}, players created at load: ${samples[0].players}`);
    for (const [key, label] of [
      ["fcp", "first contentful paint"],
      ["ready", "script done (cards built)"],
      ["filtered", "time to interactive (first filter applied)"],
    ]) {
      console.log(
        `  ${label}: median ${fmt(median(col(key)))}, min ${fmt(Math.min(...col(key)))}, max ${fmt(Math.max(...col(key)))}`,
      );
    }
  } finally {
    await browser.close();
    await rm(out, { recursive: true, force: true });
  }
}

await main();
