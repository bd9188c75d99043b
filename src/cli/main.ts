// The CLI: parses argv, dispatches to a command, turns expected errors into one-line messages and
// exit codes. `main` takes argv and io as parameters so tests can run it in-process.
import { writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { systemReason } from "../output/atomic-write.js";
import { didYouMean } from "../edit-distance.js";
import { type ErrorCode, type ReportCode, ReelError } from "../errors/reel-error.js";
import { UsageError } from "../errors/usage.js";
import { rawStream, wrappedOnTerminal } from "../display/terminal-stream.js";
import { wrapText } from "../display/text-wrap.js";
import { flushOpenStores } from "../state/sqlite/open-stores.js";
import { explainArgError } from "./arg-errors.js";
import type { CliIO, Command } from "./command.js";
import { COMMANDS } from "./commands.js";
import { EXIT } from "./exit-codes.js";
import { tuneHeapForBatches } from "./heap.js";
import { keepWasmAtBaseline } from "./wasm-tier.js";

const HELP = `reel: turn YAML manifests into generated videos, resumably.

Usage: reel <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(11)} ${c.summary}`).join("\n")}

Run 'reel <command> --help' for the options of a command.
`;

/** The process's own io; on a terminal, its text wrapped at words to its width (display/terminal-stream.ts). */
export function processIO(signal: AbortSignal): CliIO {
  return {
    stdout: wrappedOnTerminal(process.stdout),
    stderr: wrappedOnTerminal(process.stderr),
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    signal,
  };
}

/** Runs the CLI and returns the exit code. Wires signals and the output streams unless `io` is given. */
export async function main(argv: readonly string[], io?: CliIO): Promise<number> {
  if (io) return dispatch(argv, io);
  tuneHeapForBatches();
  keepWasmAtBaseline();
  // A process that exits without closing its state file (a second Ctrl-C) still commits its last turn.
  process.on("exit", flushOpenStores);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (): void => {
    interrupts++;
    // A second Ctrl-C leaves at once. The state file is consistent whenever the process dies, and
    // on this exit the state store still commits the writes of the current turn.
    if (interrupts > 1) {
      // Synchronous, so it is out before the exit: the user learns what the next run will find.
      const said =
        "reel: stopped at once (second interrupt). The state file is consistent: rerun the same command to resume; submissions cut off on the wire will be reported as uncertain.\n";
      writeSync(2, process.stderr.isTTY ? wrapText(said, (process.stderr.columns || 80) - 1) : said);
      process.exit(EXIT.interrupted);
    }
    // Aborted first: a live display on the terminal takes its block away on the abort, so that the
    // line below lands where the block was instead of under it (see display/live-display.ts).
    controller.abort(new ReelError("E_INTERRUPTED", "interrupted"));
    // Said at once: the stop itself takes a moment (answers to submissions on the wire are awaited).
    process.stderr.write("reel: stopping; press Ctrl-C again to quit at once.\n");
  };
  // A closed terminal (SIGHUP) stops the run as Ctrl-C does: what is in hand gets recorded.
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const name of signals) process.on(name, onSignal);
  // A reader that went away (`reel run | head`, a closed terminal) must not kill a run half-way
  // through recording its submissions: output is dropped, work goes on (the log file has it all).
  const onOutputError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== "EPIPE" && error.code !== "EIO") throw error;
  };
  process.stdout.on("error", onOutputError);
  process.stderr.on("error", onOutputError);
  try {
    return await dispatch(argv, processIO(controller.signal));
  } finally {
    for (const name of signals) process.off(name, onSignal);
  }
}

/**
 * A help text, laid out for 100 columns: on a narrower terminal its paragraphs and descriptions
 * flow again to the width (see wrapText), rather than each line broken on its own.
 */
function writeHelp(io: CliIO, text: string): void {
  const stdout = rawStream(io.stdout) as CliIO["stdout"] & { columns?: number };
  if (stdout.isTTY !== true) {
    stdout.write(text);
    return;
  }
  stdout.write(wrapText(text, (stdout.columns || 80) - 1, { paragraphs: true }));
}

async function dispatch(argv: readonly string[], io: CliIO): Promise<number> {
  // `reel help run` is `reel run --help`.
  if (argv[0] === "help" && argv[1] !== undefined) return dispatch([argv[1], "--help"], io);
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    writeHelp(io, HELP);
    return name === undefined ? EXIT.invalidInput : EXIT.ok;
  }
  if (name === "--version") {
    io.stdout.write("reel 0.1.0\n");
    return EXIT.ok;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const near = didYouMean(
      name,
      COMMANDS.map((c) => c.name),
    );
    io.stderr.write(
      `reel: unknown command '${name}'${near ? `; did you mean '${near}'?` : "."} Run 'reel --help' for the list.\n`,
    );
    return EXIT.invalidInput;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    writeHelp(io, `reel ${command.name}: ${entry.summary}\n\n${command.usage}\n`);
    return EXIT.ok;
  }
  try {
    const parsed = parseArgs({
      args: [...rest],
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    return await command.run(parsed, io);
  } catch (error) {
    const code = reportError(error, command, io);
    // A script that asked for JSON gets JSON on failure too, not an empty stdout.
    if (rest.includes("--json")) {
      const { code: reason, message } = error as { code?: unknown; message?: unknown };
      const argError = typeof reason === "string" && reason.startsWith("ERR_PARSE_ARGS");
      const fields = argError
        ? {
            code: "E_USAGE" satisfies ReportCode,
            message: explainArgError(String(message), command.options) ?? String(message),
          }
        : // A system error keeps its own code (ENOENT...).
          {
            code: typeof reason === "string" ? reason : ("E_INTERNAL" satisfies ReportCode),
            message: String(message),
          };
      io.stdout.write(`${JSON.stringify({ ok: false, error: fields })}\n`);
    }
    return code;
  }
}

/** Errors that stop a command before it does anything: another reel holds the state or the output
 * folder, the state file or the output folder cannot be used, jobs already sent to another service. */
const REFUSED_AT_START: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "E_STATE_LOCKED",
  "E_STATE_FILE",
  "E_OUTPUT_PATH",
  "E_OUT_LOCKED",
  "E_OTHER_SERVICE",
]);

/**
 * Errors that stop the work under way, nothing lost (exit 3, like a service that stops it): a full
 * disk, a runner of a fleet taken over, a shared store unreachable past its limit. A rerun goes on.
 */
const STOPPED_DURING_WORK: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "E_OUTPUT_DISK",
  "E_LEASE_LOST",
  "E_STORE_UNREACHABLE",
]);

function reportError(error: unknown, command: Command, io: CliIO): number {
  const err = error as { code?: string; message?: string };
  if (typeof err?.code === "string" && err.code.startsWith("ERR_PARSE_ARGS")) {
    const said = explainArgError(err.message ?? "", command.options) ?? err.message;
    io.stderr.write(`reel ${command.name}: ${said}\nRun 'reel ${command.name} --help' for its options.\n`);
    return EXIT.invalidInput;
  }
  if (error instanceof UsageError) {
    io.stderr.write(`reel ${command.name}: ${error.message}\n`);
    return EXIT.invalidInput;
  }
  if (error instanceof ReelError) {
    io.stderr.write(`reel ${command.name}: ${error.message}\n`);
    // Refused before any work (exit 2, as for invalid input: nothing was sent), or stopped during it.
    if (STOPPED_DURING_WORK.has(error.code)) return EXIT.fatalService;
    return REFUSED_AT_START.has(error.code) ? EXIT.invalidInput : EXIT.someJobsFailed;
  }
  const system = error as NodeJS.ErrnoException;
  if (typeof system?.syscall === "string" && typeof system.code === "string") {
    // The file system refused (permissions, a full disk, a file where a folder should be): the
    // user's to fix, and a stack trace would hide the one line that matters.
    const where = system.path === undefined ? "" : ` ${system.path}`;
    io.stderr.write(
      `reel ${command.name}: cannot ${system.syscall}${where} (${systemReason(system)}). Check the paths given (--out, --state) and their permissions, then rerun: what was done is kept.\n`,
    );
    return EXIT.someJobsFailed;
  }
  // A bug: keep the stack, it is what a maintainer needs.
  io.stderr.write(`reel ${command.name}: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
  return EXIT.someJobsFailed;
}
