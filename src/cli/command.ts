import type { ParseArgsConfig } from "node:util";

/** What a command may touch of the outside world. Passed in so tests run the CLI in-process. */
export interface CliIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * What the user types, for the commands that may ask (the reviewer's name). Absent or not a
   * terminal: nothing is asked, and what is missing is refused.
   */
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Aborted on SIGINT/SIGTERM (the entry point wires the signals). */
  readonly signal: AbortSignal;
}

export type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

export interface ParsedArgs {
  readonly values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  readonly positionals: string[];
}

export interface Command {
  readonly name: string;
  /** Usage text shown by `--help`, after the summary. */
  readonly usage: string;
  readonly options: OptionsConfig;
  run(args: ParsedArgs, io: CliIO): Promise<number>;
}

/**
 * A command as the table lists it: its name and summary (all `reel --help` needs), and the rest
 * loaded when it runs. Each command's module pulls in what it uses (the manifest loader, the
 * stores, the HTTP client...): loaded all at once, they cost a third of a second of CPU before any
 * command, `reel --version` included.
 */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}
