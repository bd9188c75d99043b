// The advice at the end of a run names what would change the outcome: --retry-failed while a failed
// job has attempts left, never once it has used them all (a rerun with it would send nothing, and
// the advice would loop), nor for a failure on an asset the manifest names by id (the same id fails
// the same way); and a failure the sandbox injected (--fail-rate) is said to be the sandbox's. The same in the summary a person reads, in --json's nextSteps, and in the report's banner.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { failureSteps } from "../../src/advice/failure-steps.js";
import type { JobSpec } from "../../src/manifest/types.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { makeRow } from "../report/rows.js";

const sandbox = useSandboxes();

// `bad` names an asset the service never had: its task ends Fail at every attempt.
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

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

interface Step {
  code: string;
  text: string;
  jobs?: string[];
}

/** The banner of OUT/index.html, as text. */
async function banner(dir: string): Promise<string> {
  const html = await readFile(join(dir, "out", "index.html"), "utf8");
  const section = /<section id="banner"[^>]*>([\s\S]*?)<\/section>/.exec(html)?.[1] ?? "";
  return section.replace(/<[^>]+>/g, " ").replace(/&#45;|&#x2d;/gi, "-");
}

/** What the run said after its counts and the jobs it lists: the advice lines. */
const adviceOf = (stderr: string): string => stderr.slice(stderr.indexOf("reel run: completed"));

it("a job that failed on an asset its manifest names by id, which the service does not have, is advised to name the file instead, never --retry-failed", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "broken.yaml": BROKEN });
  const first = await runCli(["run", "broken.yaml"], { cwd: dir, env: env(s) });
  expect(first.code, first.stderr).toBe(1);
  expect(first.stderr).toContain("broken/bad: Fail: asset 99999999 not found");
  // Every attempt sends the same id: the service answers the same.
  for (const advice of [adviceOf(first.stderr), await banner(dir)]) {
    expect(advice).toContain("failed on an asset the manifest names by id ({asset: 99999999})");
    expect(advice).toContain("Name the file itself in its place");
    expect(advice).not.toContain("--retry-failed");
  }
  const json = await runCli(["run", "broken.yaml", "--json"], { cwd: dir, env: env(s) });
  const steps = (JSON.parse(json.stdout) as { nextSteps: Step[] }).nextSteps;
  expect(steps).toEqual([expect.objectContaining({ code: "REPLACE_ASSET", jobs: ["broken/bad"] })]);
  // Retried all the same: the same id fails the same way; once every attempt is used, not sent.
  const retry = ["run", "broken.yaml", "--retry-failed", "--max-attempts", "2"];
  const second = await runCli(retry, { cwd: dir, env: env(s) });
  expect(second.code, second.stderr).toBe(1);
  expect(adviceOf(second.stderr)).toContain("({asset: 99999999})");
  const third = await runCli(retry, { cwd: dir, env: env(s) });
  expect(third.stderr).toContain("broken/bad not retried: 2 of 2 attempts used");
  expect(adviceOf(third.stderr)).not.toContain("--retry-failed");
  expect(s.counters.generationsCreated).toBe(3); // ok once, bad twice

  // As advised: the file named in place of the id is uploaded, and the video made.
  await writeTree(dir, {
    "voice.wav": { fixture: "tiny.wav" },
    "broken.yaml": BROKEN.replace("{ asset: 99999999 }", "./voice.wav"),
  });
  const fixed = await runCli(["run", "broken.yaml"], { cwd: dir, env: env(s) });
  expect(fixed.code, fixed.stderr).toBe(0);
  expect(fixed.stderr).toContain("reel run: completed. 2 Success");
});

it("advises --retry-failed while attempts are left, never once a job has used them all, nor for an asset the manifest names by id", () => {
  const failed = (video_id: string, attempts: number, error: string, spec?: JobSpec) =>
    makeRow({
      manifest: "m",
      video_id,
      state: "Fail",
      fail_kind: "task",
      attempts,
      error,
      file: null,
      ...(spec && { spec }),
    });
  const withSource = (source: JobSpec["source"]): JobSpec => ({
    model: "avatar-h1",
    resolution: "540p",
    source,
    chunks: [{ duration: 5, audio: { kind: "speech", voiceId: "17", text: "hi" } }],
  });
  const stamp = { dev: "1", ino: "1", size: 1, mtimeNs: "1", ctimeNs: "1" };
  const file = {
    kind: "file",
    path: "/p/face.png",
    sha256: "0".repeat(64),
    size: 1,
    format: "png",
    stamp,
  } as const;
  const steps = failureSteps(
    [
      failed("again", 1, "task: timed out"),
      // An asset reel uploaded itself: lost on the service, it is uploaded again before a retry.
      failed("uploaded", 1, "task: asset 42 was deleted", withSource(file)),
      failed("spent", 3, "task: timed out"),
      failed("named", 1, "task: asset 7 not found", withSource({ kind: "asset", id: "7" })),
      failed("named-spent", 3, "task: asset 7 not found", withSource({ kind: "asset", id: "7" })),
    ],
    3,
  );
  expect(steps.map((step) => [step.code, step.jobs])).toEqual([
    ["FIX_OR_RETRY_FAILED", ["m/again", "m/uploaded"]],
    ["EDIT_FAILED", ["m/spent"]],
    ["REPLACE_ASSET", ["m/named", "m/named-spent"]],
  ]);
  expect(steps[1]!.text).toMatch(/every attempt allowed \(3 of 3 used\).*edit/);
  expect(steps[2]!.text).toContain("({asset: 7})");
  for (const step of steps.slice(1)) expect(step.text).not.toContain("--retry-failed");
});

it("says a failure the sandbox injected (--fail-rate) is the sandbox's, not the video's", async () => {
  const s = await sandbox({ faults: { taskFailRate: 1 } });
  const dir = await tempDir();
  await writeTree(dir, { "broken.yaml": BROKEN.replace(/ {8}audio: .*\n/, "") });
  const run = await runCli(["run", "broken.yaml", "--json"], { cwd: dir, env: env(s) });
  expect(run.code, run.stderr).toBe(1);
  const steps = (JSON.parse(run.stdout) as { nextSteps: Step[] }).nextSteps;
  expect(steps).toEqual([
    expect.objectContaining({ code: "SANDBOX_FAILURE", jobs: ["broken/ok", "broken/bad"] }),
  ]);
  expect(steps[0]!.text).toMatch(/--fail-rate/);
  expect(await banner(dir)).toMatch(/--fail-rate/);
});
