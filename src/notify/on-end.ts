// --on-end CMD (REEL_ON_END): a command of the user's run when a run or watch ends, through the shell,
// with the outcome in its environment (as Nextflow's onComplete). Never from a reel.yaml: a file that
// may come from someone else must not run commands. Its failure is said, and changes no exit code.
import { spawn } from "node:child_process";
type Writable = Pick<NodeJS.WritableStream, "write">;
import type { NotifyCounts } from "./messages.js";

export interface OnEndRun {
  readonly command: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where it runs: reel's own working folder. */
  readonly cwd: string;
  /** Where its output goes (reel's stderr: stdout may be a JSON document). */
  readonly output: Writable;
  readonly warn: (line: string) => void;
}

/** The variables the command is given. */
export function onEndEnvironment(
  kind: "run" | "watch",
  ended: { readonly outcome: string; readonly exitCode?: number },
  counts: NotifyCounts,
  outDir: string,
): Record<string, string> {
  return {
    REEL_COMMAND: kind,
    REEL_OUTCOME: ended.outcome,
    ...(ended.exitCode !== undefined && { REEL_EXIT_CODE: String(ended.exitCode) }),
    REEL_DONE: String(counts.done),
    REEL_FAILED: String(counts.failed),
    REEL_UNCERTAIN: String(counts.uncertain),
    REEL_OUT_DIR: outDir,
  };
}

/** Runs the command and waits for it; resolves whatever it does. */
export function runOnEnd(run: OnEndRun, variables: Record<string, string>): Promise<void> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(run.command, {
        shell: true,
        cwd: run.cwd,
        env: { ...run.env, ...variables },
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      run.warn(`--on-end could not be started (${(error as Error).message}); reel's exit code is unchanged`);
      resolve();
      return;
    }
    child.stdout.on("data", (chunk: Buffer) => run.output.write(chunk));
    child.stderr.on("data", (chunk: Buffer) => run.output.write(chunk));
    let said = false;
    child.on("error", (error) => {
      said = true;
      run.warn(`--on-end could not be started (${error.message}); reel's exit code is unchanged`);
      resolve();
    });
    child.on("close", (code, signal) => {
      if (code !== 0 && !said) {
        run.warn(
          `--on-end failed (${signal ? `killed by ${signal}` : `exit ${code}`}); reel's exit code is unchanged`,
        );
      }
      resolve();
    });
  });
}
