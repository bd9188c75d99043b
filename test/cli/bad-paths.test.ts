// Output and state paths that cannot be used: one clear line naming the path and the fix, never a
// stack trace, and nothing sent. Run through the real binary: the crash these guard against
// ("sonic boom is not ready yet") happened only as the process exited.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { spawnReel, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const ONE = `version: 1
name: one
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "hello"
`;

async function reel(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const child = spawnReel(argv, { cwd, env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

/** One line, naming `path`, with no stack trace and no crash on exit. */
function expectOneClearLine(stderr: string, path: string): void {
  // After the line that says which state and output folder the run uses (its first, always).
  const lines = stderr.trim().split("\n");
  expect(lines[0], stderr).toMatch(/^reel (run|watch): state .+ · out /);
  expect(lines.slice(1), stderr).toHaveLength(1);
  expect(stderr).toContain(path);
  expect(stderr).not.toMatch(/internal error|\n\s+at |sonic boom/);
}

it("--out naming a file or a dangling symlink: one line saying what is there", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "one.yaml": ONE, afile: "not a folder\n" });
  await symlink(join(dir, "nowhere"), join(dir, "dangling"));

  const onFile = await reel(["run", "--sandbox", "one.yaml", "--out", "afile"], dir);
  expect(onFile.code).toBe(2); // nothing was sent: as for invalid input
  expectOneClearLine(onFile.stderr, join(dir, "afile"));
  expect(onFile.stderr).toContain("is not a folder");

  const onLink = await reel(["run", "--sandbox", "one.yaml", "--out", "dangling"], dir);
  expect(onLink.code).toBe(2);
  expectOneClearLine(onLink.stderr, join(dir, "dangling"));
  expect(onLink.stderr).toContain("is a symbolic link");
});

it("--state under a file: exit 2 and the fix, before anything is sent", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "one.yaml": ONE, afile: "not a folder\n" });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const result = await reel(["run", "one.yaml", "--state", "afile/state.db"], dir, env);
  expect(result.code).toBe(2);
  expectOneClearLine(result.stderr, join(dir, "afile", "logs"));
  expect(result.stderr).toContain("Point --state at a file in a folder you can write");
  expect(s.counters.requests.size).toBe(0);
});

it("a state file that is not reel's, with --base-url: the refusal alone, no crash after it", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "one.yaml": ONE });
  await mkdir(join(dir, ".reel"));
  await writeFile(join(dir, ".reel", "state.db"), "junk, not SQLite\n");
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const result = await reel(["run", "one.yaml"], dir, env);
  expect(result.code).toBe(2);
  expectOneClearLine(result.stderr, join(dir, ".reel", "state.db"));
  expect(result.stderr).toContain("is not a reel state file");
  expect(s.counters.requests.size).toBe(0);
});

it("a second reel on a --sandbox state file is told another reel uses it, not about the sandbox's data", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "incoming/one.yaml": ONE, "one.yaml": ONE });
  const watcher = spawnReel(["watch", "incoming", "--sandbox"], { cwd: dir, env: {} });
  let watchErr = "";
  watcher.stderr.on("data", (d: Buffer) => (watchErr += d.toString()));
  try {
    while (!watchErr.includes("watching")) await new Promise((r) => setTimeout(r, 20));
    const second = await reel(["run", "--sandbox", "one.yaml"], dir);
    expect(second.code).toBe(2);
    expectOneClearLine(second.stderr, join(dir, ".reel", "state.db"));
    expect(second.stderr).toContain("another reel process");
  } finally {
    watcher.kill("SIGTERM");
    await new Promise((r) => watcher.on("close", r));
  }
});
