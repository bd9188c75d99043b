// `reel run --retry-failed`, `--max-attempts` and `--only` end to end against the sandbox over real
// HTTP, with a real state file and output folder: a failed job costs a new credit only when the user
// asks for it, never more often than allowed, and `--only` sends exactly the jobs it names.
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

const sandbox = useSandboxes();

// `bad` names an asset the service never had (sandbox ids start at 1001): its task ends Fail in
// PreProcessing, and as reel did not upload it, reel cannot make it again. Every attempt fails.
const BROKEN = `version: 1
name: broken
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: ok
    chunks:
      - duration: 5
        text: "a calm lake at dawn"
  - id: bad
    chunks:
      - duration: 5
        text: "a chef tastes the soup"
        audio: { asset: 99999999 }
`;

const ALPHA = `version: 1
name: alpha
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: v1
    chunks:
      - duration: 5
        text: "a presenter waves"
  - id: v2
    chunks:
      - duration: 10
        text: "a cat on a sofa"
`;

const BETA = `version: 1
name: beta
videos:
  - id: w1
    model: actor-4
    resolution: 540p
    chunks:
      - duration: 5
        text: "rain on a window"
`;

function env(s: Sandbox): Record<string, string> {
  return { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
}

type Result = Record<string, unknown>;

async function resultOf(dir: string, manifest: string, id: string): Promise<Result | undefined> {
  return (await readResults(dir)).find((r) => r.manifest === manifest && r.id === id);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

const submissions = (s: Sandbox): number => s.counters.requestCount("POST", "/v1/generations");

describe("reel run --retry-failed", () => {
  it("leaves a failed job alone on a plain rerun; --retry-failed submits it again as a counted attempt", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "broken.yaml": BROKEN });

    const first = await runCli(["run", "broken.yaml"], { cwd: dir, env: env(s) });
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toMatch(/broken\/bad: Fail: .*asset 99999999/);
    expect(s.counters.generationsCreated).toBe(2);
    const failed = await resultOf(dir, "broken", "bad");
    expect(failed).toMatchObject({ status: "Fail", attempts: 1, file: null });
    expect(String(failed?.error)).toMatch(/asset 99999999/);
    expect(await resultOf(dir, "broken", "ok")).toMatchObject({ status: "Success", file: "broken/ok.mp4" });

    // A rerun without the flag pays for nothing: the failure stands, and so does the exit code.
    const plain = await runCli(["run", "broken.yaml"], { cwd: dir, env: env(s) });
    expect(plain.code, plain.stderr).toBe(1);
    expect(submissions(s)).toBe(2);
    expect(s.counters.generationsCreated).toBe(2);
    expect(await resultOf(dir, "broken", "bad")).toMatchObject({
      status: "Fail",
      attempts: 1,
      taskId: failed?.taskId,
    });

    // Asked for: one new task for the failed job only (the finished one is not paid again).
    const retry = await runCli(["run", "broken.yaml", "--retry-failed"], { cwd: dir, env: env(s) });
    expect(retry.code, retry.stderr).toBe(1);
    expect(s.counters.generationsCreated).toBe(3);
    const retried = await resultOf(dir, "broken", "bad");
    expect(retried).toMatchObject({ status: "Fail", attempts: 2, file: null });
    expect(retried?.taskId).not.toBe(failed?.taskId);
    expect(s.counters.tasks.has(String(retried?.taskId))).toBe(true);
    expect(await resultOf(dir, "broken", "ok")).toMatchObject({ status: "Success", attempts: 1 });
    // The job's record beside the videos tells the same story.
    const record = JSON.parse(await readFile(join(dir, "out", "broken", "bad.json"), "utf8"));
    expect(record).toMatchObject({ status: "Fail", attempts: 2, taskId: retried?.taskId });
  });

  it("submits a job that keeps failing at most --max-attempts times in all, across reruns", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "broken.yaml": BROKEN });
    const retry = ["run", "broken.yaml", "--retry-failed", "--max-attempts", "2"];

    // The first run submits each job once (a failure is not retried within the run that saw it).
    expect((await runCli(retry, { cwd: dir, env: env(s) })).code).toBe(1);
    expect(s.counters.generationsCreated).toBe(2);
    expect((await resultOf(dir, "broken", "bad"))?.attempts).toBe(1);

    expect((await runCli(retry, { cwd: dir, env: env(s) })).code).toBe(1);
    expect(s.counters.generationsCreated).toBe(3);
    expect((await resultOf(dir, "broken", "bad"))?.attempts).toBe(2);

    // Exhausted: further reruns with the flag send nothing, and the failure is still reported.
    for (let i = 0; i < 2; i++) {
      const exhausted = await runCli(retry, { cwd: dir, env: env(s) });
      expect(exhausted.code, exhausted.stderr).toBe(1);
      expect(exhausted.stderr).toMatch(/broken\/bad: Fail/);
      expect(exhausted.stderr).toContain(
        "broken/bad not retried: 2 of 2 attempts used (--max-attempts N allows more)",
      );
    }
    expect(submissions(s)).toBe(3);
    expect(s.counters.generationsCreated).toBe(3);
    expect(await resultOf(dir, "broken", "bad")).toMatchObject({ status: "Fail", attempts: 2 });

    // The limit counts attempts in all: a larger one allows exactly one more.
    const more = ["run", "broken.yaml", "--retry-failed", "--max-attempts", "3"];
    expect((await runCli(more, { cwd: dir, env: env(s) })).code).toBe(1);
    expect((await runCli(more, { cwd: dir, env: env(s) })).code).toBe(1);
    expect(s.counters.generationsCreated).toBe(4);
    expect((await resultOf(dir, "broken", "bad"))?.attempts).toBe(3);
  });

  it("retries nothing with --max-attempts 1, and refuses a limit below 1 before sending anything", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "broken.yaml": BROKEN });
    expect((await runCli(["run", "broken.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    const once = ["run", "broken.yaml", "--retry-failed", "--max-attempts", "1"];
    expect((await runCli(once, { cwd: dir, env: env(s) })).code).toBe(1);
    expect(s.counters.generationsCreated).toBe(2);

    const zero = await runCli(["run", "broken.yaml", "--retry-failed", "--max-attempts", "0"], {
      cwd: dir,
      env: env(s),
    });
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--max-attempts/);
    expect(submissions(s)).toBe(2);
  });
});

describe("reel run --only", () => {
  async function workspace(): Promise<string> {
    const dir = await tempDir();
    await writeTree(dir, { "manifests/alpha.yaml": ALPHA, "manifests/beta.yaml": BETA });
    return dir;
  }

  it("submits and downloads only the matching jobs; a later run without it does the rest", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const only = await runCli(["run", "manifests", "--only", "alpha/v1"], { cwd: dir, env: env(s) });
    expect(only.code, only.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(1);
    await expectServedVideo(join(dir, "out", "alpha", "v1.mp4"));
    expect(await exists(join(dir, "out", "alpha", "v2.mp4"))).toBe(false);
    expect(await exists(join(dir, "out", "beta", "w1.mp4"))).toBe(false);
    expect(await resultOf(dir, "alpha", "v1")).toMatchObject({ status: "Success", file: "alpha/v1.mp4" });
    // results.jsonl still lists every job of the manifests: those left out as not started.
    const listed = await readResults(dir);
    expect(listed.map((r) => `${String(r.manifest)}/${String(r.id)} ${String(r.status)}`)).toEqual([
      "alpha/v1 Success",
      "alpha/v2 unsent",
      "beta/w1 unsent",
    ]);
    // The state file agrees: only alpha/v1 has a task.
    const status = await runCli(["status", "manifests", "--json"], { cwd: dir, env: env(s) });
    const jobs = (JSON.parse(status.stdout) as { jobs: Result[] }).jobs;
    expect(jobs.filter((j) => j.taskId !== null).map((j) => `${String(j.manifest)}/${String(j.id)}`)).toEqual(
      ["alpha/v1"],
    );

    const rest = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
    expect(rest.code, rest.stderr).toBe(0);
    // v1 is not paid twice: two new generations, one per job left out before.
    expect(s.counters.generationsCreated).toBe(3);
    expect(s.counters.duplicateGenerations()).toBe(0);
    for (const file of ["alpha/v1.mp4", "alpha/v2.mp4", "beta/w1.mp4"]) {
      await expectServedVideo(join(dir, "out", file), file);
    }
    const results = await readResults(dir);
    expect(results.map((r) => `${String(r.manifest)}/${String(r.id)}`).sort()).toEqual([
      "alpha/v1",
      "alpha/v2",
      "beta/w1",
    ]);
    for (const r of results) expect(r).toMatchObject({ status: "Success", attempts: 1 });
  });

  it("takes globs, repeated: a pattern without '/' names an id in any manifest", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const result = await runCli(["run", "manifests", "--only", "alpha/v2", "--only", "w?"], {
      cwd: dir,
      env: env(s),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
    await expectServedVideo(join(dir, "out", "alpha", "v2.mp4"));
    await expectServedVideo(join(dir, "out", "beta", "w1.mp4"));
    expect(await exists(join(dir, "out", "alpha", "v1.mp4"))).toBe(false);
  });

  it("refuses an --only that matches no job with exit 2, and sends nothing", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const result = await runCli(["run", "manifests", "--only", "gamma/*"], { cwd: dir, env: env(s) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--only gamma\/\* matches no job/);
    expect(s.counters.requests.size).toBe(0);
    expect(s.counters.generationsCreated).toBe(0);
    expect(await exists(join(dir, "out", "alpha", "v1.mp4"))).toBe(false);
  });
});
