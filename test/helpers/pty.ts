// The real binary in a real pseudo-terminal (util-linux `script`), its output fed into a headless
// terminal emulator (@xterm/headless): what the test reads is the screen as a user sees it, after
// every redraw, cursor move and erase, not the bytes written.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import xterm from "@xterm/headless";
import { afterEach } from "vitest";
import { BIN } from "./cli.js";

export interface PtyProcess {
  /** The screen now: the visible rows, trailing spaces cut, blank rows at the end dropped. */
  screen(): Promise<string>;
  /**
   * The rows of the whole buffer (scrollback included) the terminal wrapped there itself, a line too
   * long for it: each as `previous row⏎row`, where it cut the line.
   */
  wrapped(): Promise<string[]>;
  /** Everything written to the terminal (colour codes included). */
  raw(): string;
  /** Typed at the keyboard (\x03 is Ctrl-C). */
  type(text: string): void;
  readonly exit: Promise<number | null>;
}

const quote = (arg: string): string => `'${arg.replace(/'/g, "'\\''")}'`;

/**
 * Call at the top of a test file: returns `reelInPty(argv, cwd, env)`, which runs `reel` in a
 * terminal of `cols` × `rows`. Every process still running after a test is killed.
 */
export function usePty(): (
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  size?: { cols: number; rows: number },
) => PtyProcess {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      // reel runs in a session of its own under script: killed by its pid, then script.
      let below: string[] = [];
      try {
        below = execFileSync("ps", ["-o", "pid=", "--ppid", String(child.pid)], { encoding: "utf8" })
          .split("\n")
          .filter((pid) => pid.trim() !== "");
      } catch {
        // none left (ps exits 1)
      }
      for (const pid of below) process.kill(Number(pid), "SIGKILL");
      child.kill("SIGKILL");
    }
  });
  return (argv, cwd, env, { cols, rows } = { cols: 80, rows: 30 }) => {
    const command = `stty cols ${cols} rows ${rows}; exec ${[process.execPath, BIN, ...argv].map(quote).join(" ")}`;
    // -e: script exits with reel's code; -f: output flushed as it comes; -q: no banner.
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd,
      env: { PATH: process.env.PATH ?? "", TERM: "xterm-256color", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    const term = new xterm.Terminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
    let raw = "";
    child.stdout!.on("data", (d: Buffer) => {
      raw += d.toString();
      term.write(d);
    });
    child.stderr!.resume();
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const settled = (): Promise<void> => new Promise((resolve) => term.write("", resolve));
    return {
      raw: () => raw,
      wrapped: async () => {
        await settled();
        const buffer = term.buffer.active;
        const rows: string[] = [];
        for (let i = 1; i < buffer.length; i++) {
          const line = buffer.getLine(i);
          if (line?.isWrapped) {
            rows.push(`${buffer.getLine(i - 1)!.translateToString(true)}⏎${line.translateToString(true)}`);
          }
        }
        return rows;
      },
      type: (text) => child.stdin!.write(text),
      exit,
      screen: () =>
        new Promise<string>((resolve) => {
          term.write("", () => {
            const buffer = term.buffer.active;
            const lines: string[] = [];
            for (let i = buffer.viewportY; i < buffer.viewportY + rows; i++) {
              lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
            }
            while (lines.length > 0 && lines.at(-1) === "") lines.pop();
            resolve(lines.join("\n"));
          });
        }),
    };
  };
}
