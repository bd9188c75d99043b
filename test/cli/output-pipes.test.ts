// reel's output through pipes, with the real binary: a slow reader gets all of it, and a reader that
// goes away (`reel run | head -1`) costs the run nothing: it goes on and records every submission.
import { type ChildProcess, spawn } from "node:child_process";
import { expect, it } from "vitest";
import { BIN, spawnReel, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: many\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));

it("a reader that goes away after the first line does not stop the run or lose a submission", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": manifest(12) });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const first = spawnReel(["run", "m.yaml"], { cwd: dir, env });
  const exited = exitOf(first);
  // As `| head -1` does: read one chunk, then close the pipe; later writes get EPIPE.
  first.stderr.once("data", () => {
    first.stderr.destroy();
    first.stdout.destroy();
  });
  expect(await exited).toBe(0);
  expect(s.counters.generationsCreated).toBe(12);

  const second = spawnReel(["run", "m.yaml"], { cwd: dir, env });
  let stderr = "";
  second.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  expect(await exitOf(second)).toBe(0);
  expect(stderr).toContain("12 jobs, 12 already done");
  expect(stderr).not.toContain("uncertain");
  expect(s.counters.generationsCreated).toBe(12);
});

it("a slow reader gets the whole output, past the 64 KiB a pipe holds", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": manifest(8_000) });
  // A shell pipe whose reader starts late, as `reel plan --json | slow-script` would.
  const child = spawn(
    "sh",
    ["-c", `"${process.execPath}" "${BIN}" plan m.yaml --sandbox --json | (sleep 1; cat)`],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  expect(await exitOf(child)).toBe(0);
  expect(stdout.length).toBeGreaterThan(64 * 1024);
  expect(() => JSON.parse(stdout) as unknown).not.toThrow();
});
