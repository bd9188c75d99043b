// Report benchmark: how fast OUT/index.html with 2,000 jobs becomes interactive in headless
// Chromium, then how long writing results.jsonl and index.html takes for a folder of 100,000 jobs
// (and its peak memory), and how that page opens and searches. Prints figures; asserts nothing (CI
// machines are noisy; the tests' bounds are wide).
//   npx tsc -p tsconfig.build.json && node bench/report-bench.js [jobs] [runs] [--big N] [--against DIST]
// "interactive" = from navigation start to the end of the first filter change (a key typed into the
// search box as soon as the page says it is ready); the page sets the performance marks `reel-ready`
// and `reel-filtered` itself, so the figures are the browser's clock, not the harness's.
// The write is what a run's end (or each write of a watch) does: read the rows from a real state
// file, the folder's other rows and the decisions, then write both files; each write runs in a
// process of its own, so its peak RSS is its own. `--against DIST` (another build's dist/, e.g. of
// main) writes with that build too, alternately with this one, for a before/after in one run.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { renderHtmlReport, writeHtmlReport } from "../dist/report/html-report.js";
import { RESULT_VIDEO_PATH } from "../dist/sandbox/index.js";
import { StateStore } from "../dist/state/sqlite/store.js";

const CHROMIUM = process.env.REEL_CHROMIUM ?? "/usr/bin/chromium";
const SELF = fileURLToPath(import.meta.url);
const OWN_DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const SANDBOX = "sandbox:local";
const args = process.argv.slice(2);
/** The value after `--name`, and the arguments without both. */
function option(name) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const [, value] = args.splice(at, 2);
  return value;
}
const BIG = Number(option("--big") ?? 100_000);
const AGAINST = option("--against");
const JOBS = Number(args[0] ?? 2_000);
const RUNS = Number(args[1] ?? 7);
/** Writes of the big folder per build. */
const WRITES = 3;
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

/** A state file of `count` jobs as a rebuilt state records them (rows()'s), a fifth of them decided. */
async function fillState(dir, count) {
  const state = join(dir, "state.db");
  const out = join(dir, "out");
  await mkdir(out, { recursive: true });
  await copyFile(RESULT_VIDEO_PATH, join(out, "result.mp4"));
  const jobs = rows(count).map((row) => ({
    key: row.job_key,
    manifest: row.manifest,
    videoId: row.video_id,
    specHash: String(row.id).padStart(64, "0"),
    specJson: row.spec_json,
    seconds: row.seconds,
    model: row.model,
    state: row.state,
    failKind: row.fail_kind,
    attempts: row.attempts,
    taskId: row.task_id,
    taskStatus: row.task_status,
    file: row.file,
    outDir: out,
    fileSize: null,
    fileSha256: null,
    error: row.error,
    createdAt: row.created_at,
    submittedAt: row.submitted_at,
    finishedAt: row.finished_at,
    downloadedAt: row.downloaded_at,
  }));
  const store = StateStore.open(state, { baseUrl: SANDBOX });
  try {
    await store.restoreJobs(jobs);
    await store.recordDecisions(
      jobs
        .filter((_, i) => i % 5 === 0)
        .map((job) => ({ key: job.key, specHash: job.specHash, decision: "approved", reviewer: "bench" })),
    );
  } finally {
    await store.close();
  }
  return { state, out };
}

/**
 * In a child process: what the end of a run writes, with the build in `dist`: the rows from the state
 * (every row is the run's), the folder's rows and the decisions, then results.jsonl and index.html.
 * Prints the figures as one JSON line.
 */
async function writeChild(dist, state, out) {
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  // A build from before the state file's backend moved into state/sqlite/ has it at state/store.js.
  const { StateStore: Store } = await load("state/sqlite/store.js").catch(() => load("state/store.js"));
  const { decisionsByVersion } = await load("state/job-store.js");
  const { folderRows, storedFolderRows } = await load("report/folder-rows.js");
  // A build whose reports read the rows from the store at each pass (else: all rows read first).
  const streamed = storedFolderRows && (await load("report/report-rows.js"));
  const { writeResults } = await load("report/results.js");
  const { writeHtmlReport: writePage } = await load("report/html-report.js");
  // A build that writes both files in one pass (or two, in builds before it), the ids the reports
  // mark taken as the rows are read.
  const { writeFolderReports } = await load("report/folder-reports.js").catch(() => ({}));
  // The heap as the CLI sets it (cli/heap.ts), where the build has the setting.
  (await load("cli/heap.js").catch(() => ({}))).tuneHeapForBatches?.();
  const store = Store.open(state, { baseUrl: SANDBOX });
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let folder;
    let count;
    const decisions = decisionsByVersion(await store.latestDecisions());
    if (streamed) {
      // As a run's end does it (run/run-batch.ts): the engine's versions, the rows read a batch at a
      // time at each pass, a first pass for the ids the reports mark.
      const wanted = new Map(
        Array.from({ length: BIG }, (_, i) => [`campaign-${i % 5}/v${i}`, String(i + 1).padStart(64, "0")]),
      );
      const listed = streamed.storedRows(store, function* () {
        for (const [key, specHash] of wanted) yield { key, specHash };
      });
      const thisRun = new Set();
      const manifests = new Set([...wanted.keys()].map((key) => key.split("/")[0]));
      if (writeFolderReports) {
        const tallied = streamed.onFirstPass(listed, (row) => thisRun.add(row.id));
        folder = await storedFolderRows(store, out, tallied, thisRun, manifests);
        const t1 = performance.now();
        await writeFolderReports(out, folder.rows, {
          thisRun,
          decisions,
          run: () => ({ outcome: "completed", service: "sandbox", startedAt: new Date(T0) }),
        });
        // The files are written together (one pass, or two in builds before): not told apart.
        return report(t0, t1, t1, performance.now(), cpu0);
      }
      for await (const row of listed) thisRun.add(row.id);
      count = thisRun.size;
      folder = await storedFolderRows(store, out, listed, thisRun, manifests);
    } else {
      const rows = [...(await store.jobsByVersion()).values()];
      count = rows.length;
      folder = await folderRows(store, out, rows, rows, new Set(rows.map((row) => row.manifest)));
    }
    const t1 = performance.now();
    await writeResults(out, folder.rows, folder.thisRun, decisions);
    const t2 = performance.now();
    await writePage(out, folder.rows, {
      title: `${count} jobs`,
      run: { outcome: "completed", service: "sandbox", startedAt: new Date(T0) },
      thisRun: folder.thisRun,
      decisions,
    });
    report(t0, t1, t2, performance.now(), cpu0);
  } finally {
    await store.close();
  }
}

/** Prints a write's figures as one JSON line. */
function report(t0, t1, t2, t3, cpu0) {
  const cpu = process.cpuUsage(cpu0);
  console.log(
    JSON.stringify({
      read: t1 - t0,
      results: t2 - t1,
      html: t3 - t2,
      total: t3 - t0,
      cpu: (cpu.user + cpu.system) / 1000,
      rss: process.resourceUsage().maxRSS * 1024,
    }),
  );
}

/** Runs writeChild in its own process; resolves to its figures. */
function writeOnce(dist, state, out) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [SELF, "--write-child", dist, state, out, "--big", String(BIG)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.on("exit", (code) =>
      code === 0
        ? resolvePromise(JSON.parse(stdout.trim().split("\n").pop()))
        : reject(new Error(`write exited ${code}`)),
    );
  });
}

/**
 * The big page from file://: when the first cards are shown (`reel-ready`), and how long a search
 * for the last job takes, from the input event to the filter applied (`reel-filtered`). `limitMs`:
 * a page that takes longer is given up on (reported as such).
 */
async function bigPage(browser, url, needle, limitMs) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "commit", timeout: limitMs });
    const start = Date.now();
    while (!(await page.evaluate("document.body?.dataset.ready === 'true'"))) {
      if (Date.now() - start > limitMs) return undefined;
      await sleep(10);
    }
    const ready = await page.evaluate(() => performance.getEntriesByName("reel-ready")[0].startTime);
    const searchStart = await page.evaluate((text) => {
      const box = document.getElementById("filter-text");
      box.focus();
      box.value = text;
      const at = performance.now();
      box.dispatchEvent(new globalThis.Event("input", { bubbles: true }));
      return at;
    }, needle);
    await page.waitForFunction(
      (after) => performance.getEntriesByName("reel-filtered").some((m) => m.startTime >= after),
      searchStart,
      { timeout: limitMs },
    );
    const t = await page.evaluate((after) => {
      const mark = performance.getEntriesByName("reel-filtered").find((m) => m.startTime >= after);
      return {
        searched: mark.startTime - after,
        shown: document.getElementById("shown").textContent,
        nodes: document.getElementsByTagName("*").length,
        heap: performance.memory?.usedJSHeapSize ?? Number.NaN,
      };
    }, searchStart);
    return { ready, ...t };
  } catch {
    return undefined;
  } finally {
    await context.close();
  }
}

/** The figures for a folder of BIG jobs: writes with each build, alternately, then the page. */
async function bigFolder(browser) {
  const dir = await mkdtemp(join(tmpdir(), "reel-report-bench-big-"));
  try {
    const { state, out } = await fillState(dir, BIG);
    const builds = [["this build", OWN_DIST]];
    if (AGAINST) builds.unshift([`against ${AGAINST}`, resolve(AGAINST)]);
    const figures = new Map(builds.map(([name]) => [name, []]));
    const pages = new Map();
    for (let n = 0; n < WRITES; n++) {
      for (const [name, dist] of builds) figures.get(name).push(await writeOnce(dist, state, out));
    }
    const size = (await stat(join(out, "index.html"))).size;
    const lines = (await stat(join(out, "results.jsonl"))).size;
    for (const [name, dist] of builds) {
      await writeOnce(dist, state, out); // this build's page, to open
      pages.set(
        name,
        await bigPage(browser, pathToFileURL(join(out, "index.html")).href, `v${BIG - 1}`, 60_000),
      );
    }
    const fmt = (ms) => `${ms.toFixed(0)} ms`;
    console.log(
      `reports of ${BIG} jobs, read from a state file and written, ${WRITES} times per build, alternately`,
    );
    console.log(
      `  this build's files: index.html ${(size / 1024 / 1024).toFixed(1)} MiB, results.jsonl ${(lines / 1024 / 1024).toFixed(1)} MiB`,
    );
    for (const [name] of builds) {
      const col = (key) => figures.get(name).map((f) => f[key]);
      const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
      console.log(
        `  ${name}: written in median ${fmt(median(col("total")))} (min ${fmt(Math.min(...col("total")))}, max ${fmt(Math.max(...col("total")))}): ` +
          `store read ${fmt(median(col("read")))}, results.jsonl ${fmt(median(col("results")))}, index.html ${fmt(median(col("html")))}; CPU ${fmt(median(col("cpu")))}; peak RSS ${mib(median(col("rss")))}`,
      );
      const page = pages.get(name);
      console.log(
        page
          ? `    page: first cards shown ${fmt(page.ready)} after navigation; search for v${BIG - 1}: ${fmt(page.searched)} ("${page.shown}"); ${page.nodes} elements`
          : "    page: not ready within 60 s",
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
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
    if (BIG > 0) await bigFolder(browser);
  } finally {
    await browser.close();
    await rm(out, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--write-child") await writeChild(process.argv[3], process.argv[4], process.argv[5]);
else await main();
