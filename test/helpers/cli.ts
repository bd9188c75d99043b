// Runs the CLI in-process with its own io (argv, env, cwd, signal), as citty's tests do: fast, and
// the output is captured for assertions. Crash tests spawn the real binary instead (see spawnReel).
import { spawn } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { main } from "../../src/cli/main.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Two streams standing for stdout and stderr, and what has been written to them so far. */
function captureOutput() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { stdout: "", stderr: "" };
  stdout.on("data", (d: Buffer) => {
    text.stdout += d.toString();
  });
  stderr.on("data", (d: Buffer) => {
    text.stderr += d.toString();
  });
  return { stdout, stderr, text: () => ({ ...text }) };
}

export async function runCli(
  argv: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; signal?: AbortSignal },
): Promise<CliResult> {
  const output = captureOutput();
  const code = await main(argv, {
    stdout: output.stdout,
    stderr: output.stderr,
    env: options.env ?? {},
    cwd: options.cwd,
    signal: options.signal ?? new AbortController().signal,
  });
  return { code, ...output.text() };
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

/** Spawns the real `reel` binary (it runs dist/, which the global setup builds when src/ is newer). */
export function spawnReel(argv: string[], options: { cwd: string; env: Record<string, string> }) {
  return spawn(process.execPath, [BIN, ...argv], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A real `reel` process of a test: its exit code and what it printed on stderr so far. */
export interface ReelProcess {
  readonly child: ReturnType<typeof spawn>;
  readonly exit: Promise<number | null>;
  readonly stderr: () => string;
}

/**
 * Call at the top of a test file: returns `reel(argv, cwd, env, wrapper?)`, which spawns the real
 * binary (under `wrapper`, e.g. unshare, if given) and keeps its stderr. Every process still running
 * after a test is killed, stopped ones (SIGSTOP) included, also when an assertion threw.
 */
export function useReelProcesses(): (
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  wrapper?: string[],
) => ReelProcess {
  const children: ReturnType<typeof spawn>[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGCONT");
        child.kill("SIGKILL");
      }
    }
  });
  return (argv, cwd, env, wrapper = []) => {
    const command = [...wrapper, process.execPath, BIN, ...argv];
    const child = spawn(command[0]!, command.slice(1), {
      cwd,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout!.resume();
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exit, stderr: () => stderr };
  };
}

/** Starts a long-running command (watch) in-process; `stop()` sends it the Ctrl-C signal. */
export function startCli(
  argv: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): {
  output: () => { stdout: string; stderr: string };
  stop: () => Promise<CliResult>;
  /** The exit code, for a command that ends by itself. */
  exited: Promise<number>;
} {
  const controller = new AbortController();
  const output = captureOutput();
  const done = main(argv, {
    stdout: output.stdout,
    stderr: output.stderr,
    env: options.env ?? {},
    cwd: options.cwd,
    signal: controller.signal,
  });
  return {
    output: output.text,
    exited: done,
    stop: async () => {
      controller.abort();
      const code = await done;
      return { code, ...output.text() };
    },
  };
}

/**
 * Call at the top of a test file, after useSandboxes(): returns a startCli that also stops the
 * command after each test, even when an assertion threw before the test's own stop(). vitest runs
 * afterEach hooks last-registered first, so the command stops before its sandbox closes and its
 * temp folder is removed (a watcher left running would write into a folder being deleted).
 */
export function useCommands(): typeof startCli {
  const started: ReturnType<typeof startCli>[] = [];
  afterEach(async () => {
    // stop() again on a command the test stopped only reads its exit code.
    await Promise.all(started.splice(0).map((command) => command.stop()));
  });
  return (argv, options) => {
    const command = startCli(argv, options);
    started.push(command);
    return command;
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
