// The live display's counts over a real run: the engine over HTTP on a sandbox, a real state file,
// and the frame the display would draw after every event the engine sent. Every job of the run is in
// exactly one count (waiting, preparing, for a slot, submitted, Pending, Running, downloading, left,
// done, failed, uncertain, done or failed before), so they add up to the run's videos on every frame;
// no more jobs are at the service than the --concurrency bound, downloads slowed down or not; and
// every line fits 80 columns whole.
import { join } from "node:path";
import pc from "picocolors";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { DEFAULTS } from "../../src/defaults.js";
import { renderFrame } from "../../src/display/frame.js";
import { applyEvent, makeLiveState } from "../../src/display/live-state.js";
import type { ProgressSink } from "../../src/engine/progress.js";
import { loadManifests } from "../../src/manifest/index.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { summaryRows } from "../helpers/summary-rows.js";

const sandbox = useSandboxes();
const plain = pc.createColors(false);

/** The counts a frame shows, by name ("done", "done before", "Running"...). */
export function countsOf(lines: readonly string[]): { total: number; counts: Map<string, number> } {
  const total = /(\d+)\/(\d+) videos?/.exec(lines[0]!);
  if (!total) throw new Error(`no bar in ${lines[0]}`);
  const counts = new Map<string, number>();
  const thisRun = lines.findIndex((l) => /^this (run|session):/.test(l));
  const run = lines
    .slice(thisRun)
    .join(" ")
    .split(/\n|jobs:/)[0]!;
  for (const [, n, what] of run.matchAll(
    /(\d+) (done before|failed before|uncertain before|done|failed|uncertain)\b/g,
  ))
    counts.set(what!, Number(n));
  const at = lines.findIndex((l) => l.startsWith("jobs:"));
  // The jobs' lines: from "jobs:" to the first line not indented as its continuation.
  const jobs = [lines[at]!];
  for (const line of lines.slice(at + 1)) {
    if (!/^ {8}\S/.test(line)) break;
    jobs.push(line);
  }
  for (const [, what, n] of jobs
    .join(" ")
    .matchAll(/(waiting|preparing|for a slot|submitted|Pending|Running|downloading|left) (\d+)/g))
    counts.set(what!, Number(n));
  return { total: Number(total[2]), counts };
}

it("counts every job of a run exactly once on every frame, never more at the service than the bound", async () => {
  // Tasks of 150 ms, some failing; downloads slowed, one at a time, so finished tasks wait for them
  // while the next ones run; speech made for some.
  const s = await sandbox({
    timeScale: 0.03,
    slots: 2,
    seed: 3,
    faults: {
      taskFailRate: 0.15,
      latencyMs: 120,
      routes: ["GET /files/:token", "POST /v1/audios"],
    },
  });
  const dir = await tempDir();
  const video = (i: number) =>
    i % 5 === 0
      ? `  - id: v${i}\n    model: avatar-h1\n    resolution: 540p\n    source: ./face.png\n    chunks:\n      - duration: 3\n        speech: { voice: 17, text: "video ${i}" }\n`
      : `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "video ${i}"\n`;
  const manifest = (count: number) =>
    `version: 1\nname: m\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${Array.from({ length: count }, (_, i) => video(i)).join("")}  - id: broken\n    chunks:\n      - duration: 5\n        text: "broken"\n        audio: { asset: 99999999 }\n`;
  await writeTree(dir, { "face.png": { fixture: "tiny.png" } });
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const run = async (count: number, progress?: ProgressSink) => {
    await writeTree(dir, { "m.yaml": manifest(count) });
    const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
    return runBatch({
      jobs: manifests[0]!.jobs,
      client,
      store,
      outDir: join(dir, "out"),
      cacheDir: join(dir, "cache"),
      httpOrigins: [s.baseUrl],
      concurrency: 2,
      downloadConcurrency: 1,
      pollTiming: DEFAULTS.localPolling.timing,
      ...(progress ? { progress } : {}),
    });
  };
  try {
    const first = await run(3); // done (or failed) before the run watched
    const doneBefore = (await summaryRows(first)).filter((row) => row.state === "Success").length;
    const state = makeLiveState(2, Date.now());
    const problems: string[] = [];
    const seen = new Map<string, number>(); // the most of each count on one frame
    let frames = 0;
    const check = (): void => {
      const lines = renderFrame(state, { now: Date.now(), width: 80, colors: plain });
      frames++;
      const { total, counts } = countsOf(lines);
      let sum = 0;
      for (const [what, n] of counts) {
        sum += n;
        seen.set(what, Math.max(seen.get(what) ?? 0, n));
      }
      const atService = ["submitted", "Pending", "Running"].reduce((n, w) => n + (counts.get(w) ?? 0), 0);
      const frame = lines.join("\n");
      if (sum !== total) problems.push(`counts add up to ${sum}, not ${total}:\n${frame}`);
      if (atService > 2) problems.push(`${atService} jobs at the service on a bound of 2:\n${frame}`);
      for (const line of lines)
        if (line.length > 79 || line.endsWith("…")) problems.push(`a line cut or too wide:\n${line}`);
    };
    const summary = await run(24, {
      start: check,
      event: (e) => {
        applyEvent(state, e, Date.now());
        check();
      },
      stop() {},
    });
    expect(problems.slice(0, 3), `${problems.length} frames of ${frames} wrong`).toEqual([]);
    expect(await summaryRows(summary)).toHaveLength(25);
    // The run went through every count (a test of nothing would pass too).
    expect(frames).toBeGreaterThan(100);
    // (Running only when a poll happens to see it: the learned schedule polls where tasks end.)
    for (const what of ["waiting", "preparing", "for a slot", "submitted", "downloading", "done", "failed"])
      expect(seen.get(what), what).toBeGreaterThan(0);
    expect(seen.get("done before") ?? 0).toBe(doneBefore);
  } finally {
    await client.close();
    await store.close();
  }
}, 30_000);

it("says videos made before and only fetched again (another output folder) are done before, not done by this run", async () => {
  const s = await sandbox({ timeScale: 0.01 });
  const dir = await tempDir();
  const manifest = `version: 1\nname: m\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${[0, 1, 2].map((i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "video ${i}"\n`).join("")}`;
  await writeTree(dir, { "m.yaml": manifest });
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
  const run = (out: string, progress?: ProgressSink) =>
    runBatch({
      jobs: manifests[0]!.jobs,
      client,
      store,
      outDir: join(dir, out),
      cacheDir: join(dir, "cache"),
      httpOrigins: [s.baseUrl],
      pollTiming: DEFAULTS.localPolling.timing,
      ...(progress ? { progress } : {}),
    });
  try {
    expect((await summaryRows(await run("out"))).map((row) => row.state)).toEqual([
      "Success",
      "Success",
      "Success",
    ]);
    const state = makeLiveState(DEFAULTS.concurrency, Date.now());
    let downloading = 0;
    const summary = await run("other", {
      start() {},
      event: (e) => {
        applyEvent(state, e, Date.now());
        if (e.stage === "downloading") downloading++;
      },
      stop() {},
    });
    expect((await summaryRows(summary)).map((row) => row.state)).toEqual(["Success", "Success", "Success"]);
    // Each video was fetched again into the other folder, none generated again...
    expect(downloading).toBe(3);
    expect(s.counters.generationsCreated).toBe(3);
    // ...and the last frame says so: 3 done before, none done by this run.
    const { counts } = countsOf(renderFrame(state, { now: Date.now(), width: 80, colors: plain }));
    expect(counts.get("done before")).toBe(3);
    expect(counts.get("done") ?? 0).toBe(0);
  } finally {
    await client.close();
    await store.close();
  }
}, 20_000);
