// An invalid manifest is refused before anything is taken: the state file's lock, a log file, the
// sandbox. So a run given a broken manifest says what is wrong with it, even while another reel
// holds the state file, and leaves nothing behind.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runCli, spawnReel, until, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const GOOD = `version: 1
name: one
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "hello"
`;

const BAD = `version: 1
name: bad
videos:
  - id: a
    model: actor-9
    chunks:
      - duration: 5
        text: "hello"
`;

const logsOf = (dir: string): string[] => {
  const logs = join(dir, ".reel", "logs");
  return existsSync(logs) ? readdirSync(logs).sort() : [];
};

it("an invalid manifest run against a state file another reel holds reports the manifest's problems (exit 2), not the lock, and opens no log", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "incoming/one.yaml": GOOD, "bad.yaml": BAD });
  const watcher = spawnReel(["watch", "incoming", "--sandbox"], { cwd: dir, env: {} });
  let watchErr = "";
  watcher.stderr.on("data", (d: Buffer) => (watchErr += d.toString()));
  try {
    await until(() => watchErr.includes("watching"), "the watcher holding the state file");
    const logsBefore = logsOf(dir);
    const result = await runCli(["run", "--sandbox", "bad.yaml"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("actor-9");
    expect(result.stderr).toContain("reel run: 1 problem in 1 file; nothing was sent.");
    expect(result.stderr).not.toContain("another reel process");
    expect(logsOf(dir)).toEqual(logsBefore);
  } finally {
    watcher.kill("SIGTERM");
    await new Promise((r) => watcher.on("close", r));
  }
}, 30_000);

it("an invalid manifest creates neither a state file nor a log file", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "bad.yaml": BAD });
  const result = await runCli(["run", "--sandbox", "bad.yaml"], { cwd: dir });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("actor-9");
  expect(existsSync(join(dir, ".reel"))).toBe(false);
});
