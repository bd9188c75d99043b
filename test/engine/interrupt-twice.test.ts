// A second Ctrl-C exits at once, with the real binary in a child process. The first Ctrl-C lets
// submissions already on the wire finish (a grace of 15 s, SUBMIT_GRACE_MS in src/engine/engine.ts)
// so that their answers are recorded; the second leaves at once (src/cli/main.ts), and the state
// file must still be consistent: no job is paid twice by the rerun, tasks recorded as submitted are
// picked up, and a submission cut off on the wire is `uncertain` (the README), never resent blindly.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { runCli, spawnReel, until, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const JOBS = 8;

function manifest(): string {
  const videos = Array.from(
    { length: JOBS },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 10\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: twice\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

interface JobStatus {
  id: string;
  status: string;
  taskId: string | null;
  file: string | null;
}

/** The jobs as `reel status --json` reads them from the state file (no call to the service). */
async function status(dir: string): Promise<JobStatus[]> {
  const result = await runCli(["status", "--json"], { cwd: dir });
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { jobs: JobStatus[] }).jobs;
}

const byId = (jobs: JobStatus[]): Record<string, JobStatus> => Object.fromEntries(jobs.map((j) => [j.id, j]));

it.each([
  ["SIGINT", "SIGINT"],
  ["SIGTERM", "SIGTERM"],
] as const)(
  "%s then %s while submissions are on the wire: exits 130 at once; the rerun pays nothing twice",
  async (firstSignal, secondSignal) => {
    // Submissions take 0.1 to 3 s to be answered (seeded, so the same every time); tasks run 1 s
    // (10 s of video at 0.1). At the moment of the signals some tasks are submitted and running on
    // the service, and some submissions are still waiting for their answer.
    sandbox = await startSandbox({
      slots: 8,
      timeScale: 0.1,
      preProcessingMs: 10,
      faults: { seed: 1, latencyMs: [100, 3_000], routes: ["POST /v1/generations"] },
    });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest() });
    const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };

    const child = spawnReel(["run", "m.yaml"], { cwd: dir, env });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

    await until(async () => {
      const jobs = await status(dir).catch(() => []);
      return (
        jobs.some((j) => j.status === "submitting") && jobs.some((j) => j.taskId !== null && j.file === null)
      );
    }, "a task submitted and another submission on the wire");

    child.kill(firstSignal);
    // Far enough apart that the process has taken the first signal (two signals pending at once
    // are delivered as one); close enough that the first one's grace is still running.
    await new Promise((r) => setTimeout(r, 100));
    const secondAt = Date.now();
    child.kill(secondSignal);
    const code = await exited;
    const tookMs = Date.now() - secondAt;
    expect(code, stderr).toBe(130);
    expect(stderr).toContain("stopped at once (second interrupt). The state file is consistent");
    // "At once": measured here at ~150 ms, most of it the child's exit and the parent seeing it. With
    // the first signal alone the process waits for the submissions on the wire (up to 3 s here):
    // 1 s tells the two apart with room for a slow CI.
    expect(tookMs).toBeLessThan(1_000);

    // The state file is whole, and what it says is consistent: a job whose submission was on the
    // wire is still marked as being submitted (never back to pending, which the rerun would send
    // again), and a job whose task id was answered kept it.
    const db = new Database(join(dir, ".reel", "state.db"), { readonly: true });
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
    const atExit = byId(await status(dir));
    expect(Object.keys(atExit)).toHaveLength(JOBS);
    const cutOff = Object.values(atExit).filter((j) => j.status === "submitting");
    const submitted = Object.values(atExit).filter((j) => j.taskId !== null);
    expect(cutOff.length).toBeGreaterThan(0);
    expect(submitted.length).toBeGreaterThan(0);
    for (const job of Object.values(atExit)) {
      expect(["unsent", "submitting", "PreProcessing", "Pending", "Running", "Success"]).toContain(
        job.status,
      );
    }

    // The rerun, on a service that answers at once now: the tasks already submitted are followed to
    // their videos, the jobs never sent are sent once, and those cut off on the wire are uncertain.
    sandbox.setFaults(undefined);
    const rerun = await runCli(["run", "m.yaml"], { cwd: dir, env });
    expect(rerun.stderr).toContain(
      cutOff.length === 1
        ? "1 submission of an interrupted run has an unknown outcome"
        : `${cutOff.length} submissions of an interrupted run have an unknown outcome`,
    );
    expect(rerun.code, rerun.stderr).toBe(1); // the README: 1 when a job ended uncertain
    expect(sandbox.counters.duplicateGenerations()).toBe(0);
    const afterRerun = byId(await readResults<JobStatus>(dir));
    for (const [id, before] of Object.entries(atExit)) {
      const now = afterRerun[id]!;
      if (before.status === "submitting") {
        expect(now.status, id).toBe("uncertain");
        expect(now.taskId, id).toBeNull();
      } else {
        expect(now.status, id).toBe("Success");
        if (before.taskId !== null) expect(now.taskId, id).toBe(before.taskId);
        await expectServedVideo(join(dir, "out", now.file!));
      }
    }

    // Asked explicitly, the uncertain ones are sent again; only they could have been paid twice.
    const resubmitted = await runCli(["run", "m.yaml", "--resubmit-uncertain"], { cwd: dir, env });
    expect(resubmitted.code, resubmitted.stderr).toBe(0);
    expect(Object.values(byId(await readResults<JobStatus>(dir))).map((j) => j.status)).toEqual(
      Array(JOBS).fill("Success"),
    );
    expect(sandbox.counters.duplicateGenerations()).toBeLessThanOrEqual(cutOff.length);
  },
  30_000,
);
