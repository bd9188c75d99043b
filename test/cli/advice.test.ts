// The advice at the end of a run names what would change the outcome: --retry-failed while a failed
// job has attempts left, never once it has used them all (a rerun with it would send nothing, and
// the advice would loop); and a failure the sandbox injected (--fail-rate) is said to be the
// sandbox's. The same in the summary a person reads, in --json's nextSteps, and in the report's banner.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

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

it("advises --retry-failed while attempts are left, and never once a job has used them all", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "broken.yaml": BROKEN });

  // 1 of 2 attempts used: --retry-failed would send it again.
  const first = await runCli(["run", "broken.yaml", "--max-attempts", "2"], { cwd: dir, env: env(s) });
  expect(first.code, first.stderr).toBe(1);
  expect(adviceOf(first.stderr)).toContain("--retry-failed");
  expect(await banner(dir)).toContain("--retry-failed");

  // 2 of 2: the flag would send nothing. The advice is to change the video.
  const retry = ["run", "broken.yaml", "--retry-failed", "--max-attempts", "2"];
  const second = await runCli([...retry, "--json"], { cwd: dir, env: env(s) });
  expect(second.code, second.stderr).toBe(1);
  const steps = (JSON.parse(second.stdout) as { nextSteps: Step[] }).nextSteps;
  expect(steps).toEqual([expect.objectContaining({ code: "EDIT_FAILED", jobs: ["broken/bad"] })]);
  expect(JSON.stringify(steps)).not.toContain("--retry-failed");
  expect(steps[0]!.text).toMatch(/every attempt allowed \(2 of 2 used\).*edit/);

  const third = await runCli(retry, { cwd: dir, env: env(s) });
  expect(third.code, third.stderr).toBe(1);
  expect(third.stderr).toContain("broken/bad not retried: 2 of 2 attempts used");
  expect(adviceOf(third.stderr)).not.toContain("--retry-failed");
  expect(adviceOf(third.stderr)).toMatch(/edit it in the manifest/);
  const page = await banner(dir);
  expect(page).not.toContain("--retry-failed");
  expect(page).toMatch(/edit it in the manifest/);
  expect(s.counters.generationsCreated).toBe(3); // ok once, bad twice
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
