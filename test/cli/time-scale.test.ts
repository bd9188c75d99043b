// `run --sandbox --time-scale X`: the in-process sandbox runs tasks as slowly as asked, so a newcomer
// can watch the live display on the demo; refused without --sandbox, where it could mean nothing.
import { describe, expect, test } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const ONE_VIDEO = `version: 1
name: slow
videos:
  - id: wave
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a presenter waves"
`;

describe("--time-scale", () => {
  test("run --sandbox --time-scale 0.4 runs a 5 s video's task for 2 s", { timeout: 30_000 }, async () => {
    const dir = await tempDir();
    await writeTree(dir, { "slow.yaml": ONE_VIDEO });
    const started = Date.now();
    const run = await runCli(["run", "--sandbox", "--time-scale", "0.4", "slow.yaml"], { cwd: dir });
    const elapsed = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);
    // The default (0.02) would have run it in 0.1 s; the bound is a floor, which load cannot break.
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
    const again = await runCli(["run", "--sandbox", "--time-scale", "0.4", "slow.yaml"], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
  });

  test("refused without --sandbox, and when not a number", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "slow.yaml": ONE_VIDEO });
    const env = { REEL_BASE_URL: "https://api.example.com", REEL_API_KEY: "sk-test-0123456789" };
    const real = await runCli(["run", "--time-scale", "1", "slow.yaml"], { cwd: dir, env });
    expect(real.code).toBe(2);
    expect(real.stderr).toContain("--time-scale only applies to --sandbox");
    const watch = await runCli(["watch", "--time-scale", "1", dir], { cwd: dir, env });
    expect(watch.code).toBe(2);
    expect(watch.stderr).toContain("--time-scale only applies to --sandbox");
    const bad = await runCli(["run", "--sandbox", "--time-scale", "slow", "slow.yaml"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("expected --time-scale to be a number from 0 to 60");
  });
});
