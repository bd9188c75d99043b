// Ctrl-C, SIGHUP and --sandbox resume, with the real binary in a child process (the reruns after a
// signal run in-process: runCli, the CLI's own main).
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { runCli, spawnReel, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 10\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: slow\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

function run(args: string[], cwd: string, env: Record<string, string>) {
  const child = spawnReel(args, { cwd, env });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exit, output: () => ({ stdout, stderr }) };
}

// SIGHUP: a closed terminal stops the run as Ctrl-C does.
it.each(["SIGINT", "SIGHUP"] as const)(
  "%s: exits 130 within two seconds, and the rerun finishes without a duplicate",
  async (signal) => {
    // Tasks of 0.5 s: some are running when the signal comes, most not yet sent.
    sandbox = await startSandbox({ slots: 4, timeScale: 0.05, preProcessingMs: 10 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest(12) });
    const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
    const first = run(["run", "m.yaml"], dir, env);
    // Wait until some tasks are running, then interrupt.
    while (sandbox.counters.generationsCreated < 3) await new Promise((r) => setTimeout(r, 20));
    const interruptedAt = Date.now();
    first.child.kill(signal);
    expect(await first.exit).toBe(130);
    expect(Date.now() - interruptedAt).toBeLessThan(2_000);
    expect(first.output().stderr).toMatch(/Interrupted/);
    expect(first.output().stderr).toContain("reel: stopping; press Ctrl-C again to quit at once.");
    const createdBefore = sandbox.counters.generationsCreated;
    expect(createdBefore).toBeLessThan(12);

    const second = await runCli(["run", "m.yaml"], { cwd: dir, env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain("uncertain");
    expect(sandbox.counters.generationsCreated).toBe(12);
    expect(sandbox.counters.duplicateGenerations()).toBe(0);
  },
);

it("--sandbox keeps the emulator's data beside the state file: a rerun resumes and sends nothing new", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": manifest(3) });
  const first = run(["run", "--sandbox", "m.yaml", "--json"], dir, {});
  expect(await first.exit).toBe(0);
  expect(JSON.parse(first.output().stdout)).toMatchObject({ ok: true, outcome: "completed", error: null });
  const firstResults = JSON.parse(first.output().stdout).results as { taskId: string }[];
  const second = run(["run", "--sandbox", "m.yaml", "--json"], dir, {});
  expect(await second.exit).toBe(0);
  expect(second.output().stderr).toContain("3 jobs, 3 already done");
  const secondResults = JSON.parse(second.output().stdout).results as { taskId: string }[];
  expect(secondResults.map((r) => r.taskId)).toEqual(firstResults.map((r) => r.taskId));
  await expectServedVideo(join(dir, "out", "slow", "v0.mp4"));
});

it("Ctrl-C while submissions wait 2.5 s for their answer: says it waits, records their tasks, none uncertain", async () => {
  // Every submission is answered after 2.5 to 3 s: longer than a second or two of grace would last.
  sandbox = await startSandbox({
    slots: 4,
    timeScale: 0.05,
    preProcessingMs: 10,
    faults: { seed: 3, latencyMs: [2_500, 3_000], routes: ["POST /v1/generations"] },
  });
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": manifest(4) });
  const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
  const first = run(["run", "m.yaml", "--concurrency", "2"], dir, env);
  while (!first.output().stderr.includes("reel: 4 jobs")) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 500)); // two submissions are on the wire
  first.child.kill("SIGINT");
  expect(await first.exit).toBe(130);
  const stderr = first.output().stderr;
  expect(stderr).toContain("waiting up to 15 s for the answer to 2 submissions already sent");
  expect(stderr).not.toMatch(/\] uncertain|\d uncertain/); // no job marked so, in the log or the summary
  expect(stderr.match(/submitted +slow\/v\d task/g)).toHaveLength(2);

  const second = await runCli(["run", "m.yaml"], { cwd: dir, env });
  expect(second.code, second.stderr).toBe(0);
  expect(second.stderr).not.toContain("uncertain");
  expect(sandbox.counters.generationsCreated).toBe(4);
  expect(sandbox.counters.duplicateGenerations()).toBe(0);
}, 30_000);
