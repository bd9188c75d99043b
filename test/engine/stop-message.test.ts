// A run stopped by the service (no credits, a refused key), end to end against the sandbox over real
// HTTP with 5 jobs sent at once: the stop is said once, with its fix, and the summary's first line
// says how the run ended in words (`stopped: out of credits`); exit 3 and `--json`'s outcome stay as
// documented.
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const FIVE = `version: 1\nname: m\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${[0, 1, 2, 3, 4]
  .map((i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n`)
  .join("")}`;

async function runFive(s: Sandbox, key: string, json = false) {
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": FIVE });
  return runCli(["run", "m.yaml", "--concurrency", "5", ...(json ? ["--json"] : [])], {
    cwd: dir,
    env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: key },
  });
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe("a run stopped by the service says so once", () => {
  it("out of credits: one stop message with its fix, 'stopped: out of credits', exit 3", async () => {
    // 12 credits: two 5 s videos are paid for, the other three refused with 402.
    const s = await sandbox({ credits: 12 });
    const result = await runFive(s, s.apiKey);
    expect(result.code).toBe(3);
    const { stderr } = result;
    expect(stderr).toMatch(/^reel run: stopped: out of credits\. 2 Success, 3 unsent$/m);
    // The service's own words and the fix, each once (not once per job, then twice more).
    expect(count(stderr, "Insufficient credits")).toBe(1);
    expect(count(stderr.toLowerCase(), "add credits")).toBe(1);
    expect(stderr).toContain("not sent, nothing paid for them: m/v");
    expect(stderr).not.toContain("fatal");
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("out of credits, --json: outcome, error and next step as documented", async () => {
    const s = await sandbox({ credits: 12 });
    const result = await runFive(s, s.apiKey, true);
    expect(result.code).toBe(3);
    const doc = JSON.parse(result.stdout) as {
      ok: boolean;
      outcome: string;
      error: { code: string };
      nextSteps: { code: string }[];
      results: { status: string; error: string | null }[];
    };
    expect(doc).toMatchObject({ ok: false, outcome: "fatal", error: { code: "E_CREDITS" } });
    expect(doc.nextSteps.map((step) => step.code)).toEqual(["ADD_CREDITS"]);
    // Each refused job keeps why it was not sent, for scripts.
    const unsent = doc.results.filter((r) => r.status === "unsent");
    expect(unsent).toHaveLength(3);
    for (const r of unsent) expect(r.error).toContain("not enough credits");
  });

  it("a refused key: one stop message with its fix, no wait for answers already in, exit 3", async () => {
    const s = await sandbox({ apiKey: "sk-the-account-key" });
    const result = await runFive(s, "sk-a-wrong-key");
    expect(result.code).toBe(3);
    const { stderr } = result;
    expect(stderr).toMatch(/^reel run: stopped: the service refused the API key\. 5 unsent$/m);
    expect(count(stderr, "Invalid API key")).toBe(1);
    expect(count(stderr, "REEL_API_KEY")).toBe(1);
    // Every submission was answered (401) at once: there is nothing to wait for.
    expect(stderr).not.toContain("waiting up to");
    expect(stderr).not.toContain("sk-a-wrong-key");
    expect(s.counters.generationsCreated).toBe(0);

    const json = await runFive(s, "sk-a-wrong-key", true);
    expect(json.code).toBe(3);
    const doc = JSON.parse(json.stdout) as {
      outcome: string;
      error: { code: string };
      nextSteps: { code: string }[];
    };
    expect(doc).toMatchObject({ outcome: "fatal", error: { code: "E_AUTH" } });
    expect(doc.nextSteps.map((step) => step.code)).toEqual(["FIX_KEY"]);
  });
});
