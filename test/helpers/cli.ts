// Runs the CLI in-process with its own io (argv, env, cwd, signal), as citty's tests do: fast, and
// the output is captured for assertions. Crash tests spawn the real binary instead (see spawnReel).
import { spawn } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { main } from "../../src/cli/main.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(
  argv: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; signal?: AbortSignal },
): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const code = await main(argv, {
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: options.cwd,
    signal: options.signal ?? new AbortController().signal,
  });
  return { code, stdout: out, stderr: err };
}

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = join(REPO, "bin", "reel.js");
export const FIXTURES = join(REPO, "test", "sandbox", "fixtures");

/** Writes files (text, or a fixture name to copy as `{ fixture }`) under `dir`. */
export async function writeTree(
  dir: string,
  files: Record<string, string | { fixture: string }>,
): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    await mkdir(dirname(path), { recursive: true });
    if (typeof content === "string") await writeFile(path, content);
    else await copyFile(join(FIXTURES, content.fixture), path);
  }
}

/** Spawns the real `reel` binary (needs dist/, which `npm test` builds first). */
export function spawnReel(argv: string[], options: { cwd: string; env: Record<string, string> }) {
  return spawn(process.execPath, [BIN, ...argv], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Starts a long-running command (watch) in-process; `stop()` sends it the Ctrl-C signal. */
export function startCli(
  argv: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): { output: () => { stdout: string; stderr: string }; stop: () => Promise<CliResult> } {
  const controller = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const done = main(argv, {
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: options.cwd,
    signal: controller.signal,
  });
  return {
    output: () => ({ stdout: out, stderr: err }),
    stop: async () => {
      controller.abort();
      const code = await done;
      return { code, stdout: out, stderr: err };
    },
  };
}

/** Waits until `condition` holds, checking every 25 ms; fails with `what` after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
