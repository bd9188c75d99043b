// What the benches share: a sandbox in a child process, the manifest they run, and runBatch as
// `reel run` calls it against a service on this machine.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readingManifests } from "../dist/cli/heap.js";
import { makeClient } from "../dist/client/index.js";
import { runBatch } from "../dist/drivers/run-batch.js";
import { loadManifests } from "../dist/manifest/index.js";
import { makeReelMetrics } from "../dist/metrics/reel-metrics.js";

export const BIN = fileURLToPath(new URL("../bin/reel.js", import.meta.url));

/** Starts `reel sandbox` in a child process, so its CPU is not counted as reel's. */
export async function childSandbox(args) {
  const child = spawn(process.execPath, [BIN, "sandbox", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("REEL_API_KEY=")) resolve();
    });
    child.on("exit", () => reject(new Error("sandbox exited")));
  });
  const baseUrl = /REEL_BASE_URL=(\S+)/.exec(out)[1];
  const apiKey = /REEL_API_KEY=(\S+)/.exec(out)[1];
  return { baseUrl, apiKey, close: () => child.kill("SIGTERM") };
}

/** A manifest of `count` videos; video i's chunks last `durationsOf(i)` seconds, chunk c says `textOf(i, c)`. */
export function manifestOf(name, count, durationsOf, textOf = (i, c) => `take ${i} part ${c}`) {
  const videos = [];
  for (let i = 0; i < count; i++) {
    const chunks = durationsOf(i)
      .map((d, c) => `      - duration: ${d}\n        text: "${textOf(i, c)}"\n`)
      .join("");
    videos.push(`  - id: v${i}\n    chunks:\n${chunks}`);
  }
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos.join("")}`;
}

/** The jobs of the manifest `file` in `dir`; throws on a problem. */
export async function loadJobs(dir, file) {
  // As `reel run` reads them (src/cli/run-command.ts).
  const { manifests, problems } = await readingManifests(() => loadManifests([file], { cwd: dir }));
  if (problems.length) throw new Error(JSON.stringify(problems.slice(0, 3)));
  return manifests.flatMap((m) => m.jobs);
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : Number.NaN;
}

/** The metrics of `reel run --metrics` against `sandbox`, 64 generations at a time. */
export function benchMetrics(sandbox) {
  return makeReelMetrics({
    identity: { command: "run", host: "bench", pid: 1, service: sandbox.baseUrl, store: "sqlite" },
    concurrency: 64,
  });
}

/** A client of `sandbox`, its answers and retries counted in `metrics` when given. */
export function clientOf(sandbox, metrics) {
  return makeClient({
    baseUrl: sandbox.baseUrl,
    apiKey: sandbox.apiKey,
    ...(metrics ? { onAnswer: metrics.onAnswer, onRetry: metrics.onRetry } : {}),
  });
}

/**
 * runBatch against `sandbox`, the output and cache under `dir`, polling as `reel run` does for a
 * service on this machine (src/cli/service-options.ts); `options`: the jobs, client, store, the
 * concurrency and whatever else the bench sets.
 */
export function runOnSandbox(sandbox, dir, options) {
  return runBatch({
    outDir: join(dir, "out"),
    cacheDir: join(dir, "cache"),
    httpOrigins: [new URL(sandbox.baseUrl).origin],
    pollTiming: { minMs: 20, maxMs: 2_000 },
    pollsPerSecond: 500,
    ...options,
  });
}
