// The event stream's cost: reel's CPU per job with --events FILE against without, and with --events,
// --notify (a receiver in this process, answering 200) and --metrics (scraped every second) all on,
// the same run of BENCH_JOBS instant jobs (default 2,000) alternately, BENCH_ROUNDS times each
// (default 5); the medians.
// Without the file the store still records the stream (reel events reads it): that is the CLI
// without --events.
//   node bench/events-bench.js   (after `npm run build`)
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tuneHeapForBatches } from "../dist/cli/heap.js";
import { EventStream } from "../dist/events/stream.js";
import { timedStore } from "../dist/metrics/store-timing.js";
import { Notifier } from "../dist/notify/notifier.js";
import { teeProgress } from "../dist/display/index.js";
import { loadManifests } from "../dist/manifest/index.js";
import { StateStore } from "../dist/state/sqlite/store.js";
import { benchMetrics, childSandbox, clientOf, median, runOnSandbox } from "./batch-on-sandbox.js";

const N = Number(process.env.BENCH_JOBS ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

// As `reel run` does (see src/cli/heap.ts), so the figures are the CLI's.
tuneHeapForBatches();

/** `mode`: "without", "with" (--events), "all" (--events, --notify, --metrics). */
async function once(sandbox, mode) {
  const withFile = mode !== "without";
  const all = mode === "all";
  const dir = mkdtempSync(join(tmpdir(), "reel-events-bench-"));
  try {
    const videos = Array.from(
      { length: N },
      (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n`,
    );
    writeFileSync(
      join(dir, "m.yaml"),
      `version: 1\nname: bench\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos.join("")}`,
    );
    const cpu0 = process.cpuUsage();
    const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
    const opened = StateStore.open(join(dir, "state.db"), { baseUrl: sandbox.baseUrl });
    const metrics = all ? benchMetrics(sandbox) : undefined;
    const store = metrics ? timedStore(opened, metrics.observeStoreCall) : opened;
    const events = await EventStream.open(opened, {
      command: "run",
      ...(withFile ? { file: join(dir, "events.jsonl") } : {}),
      warn: (line) => console.error(line),
    });
    const notifier = all
      ? new Notifier({
          command: "run",
          targets: [{ url: sandbox.hook, from: "--notify", shown: sandbox.hook, checked: false }],
          secret: "bench",
          secrets: [sandbox.apiKey],
          outDir: join(dir, "out"),
          warn: (line) => console.error(line),
          log: () => {},
          output: process.stderr,
        })
      : undefined;
    notifier?.listen(events.bus);
    const client = clientOf(sandbox, metrics);
    const scraper = metrics && setInterval(() => void metrics.registry.metrics(), 1_000);
    const summary = await runOnSandbox(sandbox, dir, {
      jobs: manifests.flatMap((m) => m.jobs),
      client,
      store,
      concurrency: 64,
      downloadConcurrency: 16,
      progress: metrics ? teeProgress(events.recorder, metrics.progress) : events.recorder,
    });
    if (scraper) clearInterval(scraper);
    events.end(summary.outcome);
    await events.close();
    await notifier?.close(events.endedAs);
    await opened.close();
    await client.close();
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000 / N;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One measurement in a fresh process (no JIT or heap carried over from the one before). */
function child(mode) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), mode], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, BENCH_SANDBOX: JSON.stringify(sandboxInfo) },
    });
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    proc.on("exit", (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`exit ${code}`))));
  });
}

let sandboxInfo;
const mode = process.argv[2];
if (mode) {
  const info = JSON.parse(process.env.BENCH_SANDBOX);
  console.log(await once(info, mode));
} else {
  const sandbox = await childSandbox(["--slots", "1000", "--time-scale", "0"]);
  // The webhook receiver: in this process, so that its CPU is not counted as reel's.
  let received = 0;
  const hook = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.end("ok");
    });
  });
  await new Promise((resolve) => hook.listen(0, "127.0.0.1", resolve));
  sandboxInfo = {
    baseUrl: sandbox.baseUrl,
    apiKey: sandbox.apiKey,
    hook: `http://127.0.0.1:${hook.address().port}/hook`,
  };
  try {
    const without = [];
    const withFile = [];
    const withAll = [];
    for (let i = 0; i < ROUNDS; i++) {
      without.push(await child("without"));
      withFile.push(await child("with"));
      withAll.push(await child("all"));
    }
    const a = median(without);
    const b = median(withFile);
    const c = median(withAll);
    console.log(`events: reel CPU per job, ${N} jobs, median of ${ROUNDS} alternating runs (a process each)`);
    console.log(`  without --events: ${a.toFixed(3)} ms  (${without.map((x) => x.toFixed(3)).join(" ")})`);
    console.log(`  with --events:    ${b.toFixed(3)} ms  (${withFile.map((x) => x.toFixed(3)).join(" ")})`);
    console.log(`  ratio: ${(b / a).toFixed(3)}`);
    console.log(
      `  with --events --notify --metrics: ${c.toFixed(3)} ms  (${withAll.map((x) => x.toFixed(3)).join(" ")}; ${received} messages received)`,
    );
    console.log(`  ratio: ${(c / a).toFixed(3)}`);
  } finally {
    sandbox.close();
    hook.close();
  }
}
