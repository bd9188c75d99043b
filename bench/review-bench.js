// Review page benchmark: how fast `reel review` with 2,000 and 10,000 takes becomes interactive in
// headless Chromium, and what an idle review server costs in CPU. Prints figures; asserts nothing.
//   npx tsc -p tsconfig.build.json && node bench/review-bench.js [takes...] [--runs N]
// The state is filled directly (rows as a rebuilt state records them: done, a video each, a fifth of
// them decided), each video a hard link to the sandbox's small result video in OUT: no service, no
// run. "Interactive" = from navigation start to the end of the first key handled (`j`, pressed as
// soon as the page says it is ready); the page marks `reel-ready` and `reel-key` itself, so the
// figures are the browser's clock.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { link, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { RESULT_VIDEO_PATH } from "../dist/sandbox/index.js";
import { StateStore } from "../dist/state/sqlite/store.js";

const CHROMIUM = process.env.REEL_CHROMIUM ?? "/usr/bin/chromium";
const BIN = fileURLToPath(new URL("../bin/reel.js", import.meta.url));
const SANDBOX = "sandbox:local";
const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
const SIZES = args.filter((a, i) => /^\d+$/.test(a) && i !== runsAt + 1).map(Number);
if (SIZES.length === 0) SIZES.push(2_000, 10_000);
const TAKES = 3;
const T0 = Date.UTC(2025, 4, 1, 9, 0, 0);

/** A state with `count` takes (videos of 3 takes, a matrix of 5 languages), their videos in OUT. */
async function fill(dir, count) {
  const state = join(dir, ".reel", "state.db");
  const out = join(dir, "out");
  await mkdir(join(out, "campaign"), { recursive: true });
  await mkdir(join(dir, ".reel"), { recursive: true });
  const rows = [];
  for (let i = 0; i < count; i++) {
    const video = `spot-${["en", "de", "fr", "es", "it"][i % 5]}-${Math.floor(i / (5 * TAKES))}`;
    const id = `${video}~${1 + (Math.floor(i / 5) % TAKES)}`;
    const file = `campaign/${id}.mp4`;
    await link(RESULT_VIDEO_PATH, join(out, file));
    const spec = { model: "actor-2", seed: 1000 + i, chunks: [{ duration: 5, text: `take ${i}` }] };
    rows.push({
      key: `campaign/${id}`,
      manifest: "campaign",
      videoId: id,
      specHash: String(i).padStart(64, "0"),
      specJson: JSON.stringify(spec),
      seconds: 5,
      model: "actor-2",
      state: "Success",
      failKind: null,
      attempts: 1,
      taskId: String(1800000000000000001n + BigInt(i)),
      taskStatus: "Success",
      file,
      outDir: out,
      fileSize: null,
      fileSha256: null,
      error: null,
      createdAt: T0,
      submittedAt: T0 + 1_000,
      finishedAt: T0 + 12_000,
      downloadedAt: T0 + 13_000,
    });
  }
  const store = StateStore.open(state, { baseUrl: SANDBOX });
  try {
    await store.restoreJobs(rows);
    await store.recordDecisions(
      rows
        .filter((_, i) => i % 5 === 0)
        .map((row) => ({ key: row.key, specHash: row.specHash, decision: "approved", reviewer: "bench" })),
    );
  } finally {
    await store.close();
  }
  return { state, out };
}

/** `reel review` on the state, and its address. */
async function serve(dir, state, out) {
  const child = spawn(
    process.execPath,
    [BIN, "review", "--sandbox", "--state", state, "--out", out, "--reviewer", "bench"],
    { cwd: dir, env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  while (!stdout.includes("\n")) {
    if (child.exitCode !== null) throw new Error(`reel review exited: ${stderr}`);
    await sleep(20);
  }
  return { child, url: /http:\/\/\S+/.exec(stdout)[0] };
}

/** CPU seconds (user + system) of process `pid` so far, from /proc. */
async function cpuSeconds(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function cpuOver(pid, ms) {
  const before = await cpuSeconds(pid);
  await sleep(ms);
  return ((await cpuSeconds(pid)) - before) / (ms / 1000);
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
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--mute-audio",
    ],
  });
  try {
    for (const count of SIZES) {
      const dir = await mkdtemp(join(tmpdir(), "reel-review-bench-"));
      const { state, out } = await fill(dir, count);
      const { child, url } = await serve(dir, state, out);
      try {
        const samples = [];
        for (let run = 0; run < RUNS; run++) {
          const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
          const page = await context.newPage();
          await page.goto(url, { waitUntil: "commit" });
          while (!(await page.evaluate("document.body?.dataset.ready === 'true'"))) await sleep(5);
          await page.keyboard.press("j");
          await page.waitForFunction(() => performance.getEntriesByName("reel-key").length > 0);
          samples.push(
            await page.evaluate(() => ({
              ready: performance.getEntriesByName("reel-ready")[0].startTime,
              key: performance.getEntriesByName("reel-key")[0].startTime,
              nodes: document.getElementsByTagName("*").length,
              players: document.querySelectorAll("video").length,
            })),
          );
          if (run === RUNS - 1) {
            // One page left open: the server reads the store each second for its live events.
            const listening = await cpuOver(child.pid, 10_000);
            await context.close();
            await sleep(500);
            const idle = await cpuOver(child.pid, 10_000);
            samples.cpu = { listening, idle };
          } else await context.close();
        }
        const col = (key) => samples.map((s) => s[key]);
        const fmt = (ms) => `${ms.toFixed(0)} ms`;
        console.log(
          `review page, ${count} takes (about ${Math.ceil(count / TAKES)} videos of ${TAKES} takes), ${RUNS} loads in ${CHROMIUM}`,
        );
        console.log(`  elements: ${samples[0].nodes}, players in the document: ${samples[0].players}`);
        for (const [key, label] of [
          ["ready", "takes shown (script done)"],
          ["key", "time to interactive (first key handled)"],
        ]) {
          const values = col(key);
          console.log(
            `  ${label}: median ${fmt(median(values))}, min ${fmt(Math.min(...values))}, max ${fmt(Math.max(...values))}`,
          );
        }
        const pct = (x) => `${(x * 100).toFixed(1)}% of a core`;
        console.log(
          `  server CPU over 10 s: ${pct(samples.cpu.idle)} idle (no page), ${pct(samples.cpu.listening)} with a page open`,
        );
      } finally {
        child.kill("SIGINT");
        await new Promise((resolve) => child.once("exit", resolve));
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await browser.close();
  }
}

await main();
