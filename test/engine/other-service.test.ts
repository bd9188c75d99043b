// The same service reached through another address looks like a new one to the state file (rows
// are scoped by base URL): reel must not pay again for jobs already sent through the first address,
// unless the user says it is another service, and then never write over the first one's videos.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, useCommands, until, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
// Stopped after each test, before the sandboxes close.
const startCommand = useCommands();

const MANIFEST = `version: 1
name: lost
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: v1
    chunks:
      - duration: 5
        text: "a lighthouse at dusk"
  - id: v2
    chunks:
      - duration: 10
        text: "a boat leaves the harbour"
`;

/** The sandbox's address with `localhost` for `127.0.0.1`: one service, another name. */
function alias(s: Sandbox): string {
  return s.baseUrl.replace("127.0.0.1", "localhost");
}

describe("another address for a service already used", () => {
  it("refuses to pay again for jobs sent through another address, until --new-service; keeps the first videos", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m/lost.yaml": MANIFEST });
    const first = await runCli(["run", "m"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    expect(first.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
    const firstVideo = await readFile(join(dir, "out", "lost", "v1.mp4"));

    const aliased = { REEL_BASE_URL: alias(s), REEL_API_KEY: s.apiKey };
    const refused = await runCli(["run", "m"], { cwd: dir, env: aliased });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `2 jobs were already sent to ${s.baseUrl} (e.g. lost/v1), not to ${alias(s)}`,
    );
    expect(refused.stderr).toContain(`--base-url ${s.baseUrl}`);
    expect(refused.stderr).toContain("--new-service");
    expect(s.counters.generationsCreated).toBe(2);
    expect(s.counters.requestCount("POST", "/v1/assets")).toBe(0);

    // plan says so before anything is run.
    const plan = await runCli(["plan", "m"], { cwd: dir, env: aliased });
    expect(plan.stdout).toContain("2 of the new jobs were already sent to another service address");
    expect(plan.stdout).toContain(`  lost/v1 (sent to ${s.baseUrl})`);

    // --json: the refusal as every command's error document.
    const json = await runCli(["run", "m", "--json"], { cwd: dir, env: aliased });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "E_OTHER_SERVICE" } });

    // Told it is another service: made again there, and the first service's videos are kept.
    const again = await runCli(["run", "m", "--new-service"], { cwd: dir, env: aliased });
    expect(again.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(4);
    const files = (await readdir(join(dir, "out", "lost"))).filter((f) => f.endsWith(".mp4")).sort();
    expect(files).toHaveLength(4);
    const kept = files.filter((f) => f.startsWith("v1.") && f !== "v1.mp4");
    expect(kept).toHaveLength(1);
    expect(await readFile(join(dir, "out", "lost", kept[0]!))).toEqual(firstVideo);

    // Back on the first address: its jobs are done, nothing is sent, nothing is overwritten.
    const back = await runCli(["run", "m"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    expect(back.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(4);
    expect((await readdir(join(dir, "out", "lost"))).filter((f) => f.endsWith(".mp4"))).toHaveLength(4);
  });

  it("never refuses work done on the sandbox: trying a campaign there first does not block the real run", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m/lost.yaml": MANIFEST });
    expect((await runCli(["run", "m", "--sandbox"], { cwd: dir })).code).toBe(0);
    const real = await runCli(["run", "m"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    expect(real.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("in watch, skips such a manifest with the reason and runs nothing of it", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m/lost.yaml": MANIFEST });
    expect(
      (await runCli(["run", "m"], { cwd: dir, env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey } }))
        .code,
    ).toBe(0);
    const watcher = startCommand(["watch", "m"], {
      cwd: dir,
      env: { REEL_BASE_URL: alias(s), REEL_API_KEY: s.apiKey },
    });
    let result;
    try {
      await until(() => watcher.output().stderr.includes("skipped until fixed"), "the manifest skipped");
    } finally {
      result = await watcher.stop();
    }
    expect(result.stderr).toContain("2 jobs were already sent to");
    expect(result.stderr).toContain("skipped until fixed");
    expect(s.counters.generationsCreated).toBe(2);
  });
});
