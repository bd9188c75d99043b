// `reel sandbox`: the emulator as a standalone server, so a user can point any client (curl, a
// second shell running `reel run`) at it. The two stdout lines are a contract of the README:
// scripts `eval` them, so nothing else may ever be printed to stdout. Each is an `export`: a plain
// `VAR=value` pasted into a shell sets a shell variable that `reel` never sees.
import { resolve } from "node:path";
import { UsageError } from "../errors/usage.js";
import { makeLogger } from "../log/logger.js";
import {
  makeApiKey,
  type SandboxFaults,
  type SandboxOptions,
  type SandboxRequest,
  startSandbox,
} from "../sandbox/index.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";

function numberOption(args: ParsedArgs, name: string): number | undefined {
  const raw = args.values[name];
  if (raw === undefined) return undefined;
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value)) throw new UsageError(`--${name} expects a number, got '${String(raw)}'`);
  return value;
}

function stringOption(args: ParsedArgs, name: string): string | undefined {
  const raw = args.values[name];
  return typeof raw === "string" ? raw : undefined;
}

/** A probability, 0 to 1. */
function rateOption(args: ParsedArgs, name: string): number | undefined {
  const value = numberOption(args, name);
  if (value !== undefined && (value < 0 || value > 1))
    throw new UsageError(`--${name} expects a probability from 0 to 1, got '${String(args.values[name])}'`);
  return value;
}

/** --latency MS, or MIN-MAX. */
function latencyOption(args: ParsedArgs): number | [number, number] | undefined {
  const raw = stringOption(args, "latency");
  if (raw === undefined) return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?)\s*)?$/.exec(raw);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!match || !(max >= min)) {
    throw new UsageError(
      `--latency expects milliseconds (e.g. 50) or a range MIN-MAX (e.g. 20-200), got '${raw}'`,
    );
  }
  return match[2] === undefined ? min : [min, max];
}

/** How varied and how faulty the sandbox is: --jitter, --drift, --seed and the fault rates. */
function variationOptions(args: ParsedArgs): Partial<SandboxOptions> {
  const jitter = numberOption(args, "jitter");
  const drift = numberOption(args, "drift");
  const seed = numberOption(args, "seed");
  if (seed !== undefined && !Number.isInteger(seed))
    throw new UsageError(`--seed expects a whole number, got '${seed}'`);
  const p429 = rateOption(args, "p429");
  const p503 = rateOption(args, "p503");
  const failRate = rateOption(args, "fail-rate");
  const retryAfter = numberOption(args, "retry-after");
  const latency = latencyOption(args);
  const faults: SandboxFaults = {
    ...(seed !== undefined ? { seed } : {}),
    ...(p429 !== undefined ? { rate429: p429 } : {}),
    ...(p503 !== undefined ? { rate503: p503 } : {}),
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    ...(failRate !== undefined ? { taskFailRate: failRate } : {}),
    ...(latency !== undefined ? { latencyMs: latency } : {}),
  };
  return {
    ...(jitter !== undefined ? { jitter } : {}),
    ...(drift !== undefined ? { driftPerMinute: drift } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(Object.keys(faults).length > 0 ? { faults } : {}),
  };
}

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

function logLevelOption(args: ParsedArgs): LogLevel {
  const raw = stringOption(args, "log-level") ?? "info";
  const level = LOG_LEVELS.find((l) => l === raw);
  if (!level) throw new UsageError(`--log-level expects one of ${LOG_LEVELS.join(", ")}, got '${raw}'`);
  return level;
}

/** The local time of day, `12:03:04`: a request log is read while it is written. */
function clock(at: Date): string {
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/** One request as a person reads it: `12:03:04  POST /v1/generations  200  task 1017, 5 s of video  3 ms`. */
export function formatRequestLine(request: SandboxRequest, at: Date): string {
  const status = request.status === "drop" ? "---" : String(request.status);
  const note = request.note === undefined ? "" : `  ${request.note}`;
  return `${clock(at)}  ${request.method.padEnd(6)} ${request.path.padEnd(26)} ${status}${note}  ${request.ms} ms\n`;
}

/**
 * pino's lines (a timer or a handler that failed) written for a person, at levels above info: the
 * JSON with its fields is what --log-level debug prints.
 */
function readableLogLines(out: NodeJS.WritableStream): { write(line: string): void } {
  return {
    write(line: string) {
      let entry: { level?: number; msg?: string; err?: { message?: string; stack?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        out.write(line);
        return;
      }
      const label = (entry.level ?? 50) >= 50 ? "error" : "warning";
      const cause = entry.err?.stack ?? entry.err?.message;
      out.write(`${clock(new Date())}  ${label}: ${entry.msg ?? ""}${cause ? `\n${cause}` : ""}\n`);
    },
  };
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

export const sandboxCommand: Command = {
  name: "sandbox",
  usage: `Usage: reel sandbox [--port N] [--key KEY] [--slots N] [--time-scale X] [--jitter J] [--drift X]
                    [--seed N] [--p429 P] [--p503 P] [--fail-rate P] [--latency MS]
                    [--credits N] [--big-ids] [--data-dir DIR] [--log-level LEVEL]

Prints 'export REEL_BASE_URL=...' and 'export REEL_API_KEY=...' on stdout once it listens
(paste them into the shell that runs reel), then serves until SIGINT/SIGTERM. Each request is written to stderr as one line:
  12:03:04  POST   /v1/generations            200  task 1017, 5 s of video  3 ms

Options:
  --port N         TCP port; 0 picks a free one (default 0)
  --key KEY        the API key to accept (default: a random sk-sandbox-... key)
  --slots N        tasks Running at once; others wait in Pending (default 4)
  --time-scale X   seconds of Running per second of video (default 0.02)
  --jitter J       run times vary by a factor in [1-J, 1+J], drawn per request from its content
                   and --seed (the same job runs as long on two sandboxes of one seed); 0 to 0.9
                   (default 0)
  --drift X        the service slows down by X of its run time per minute (negative: speeds
                   up), to rehearse a service whose load changes (default 0)
  --seed N         seed of --jitter, --fail-rate and the faults below (default 1)
  --p429 P         answer P of the requests (0 to 1) with 429 Too Many Requests and Retry-After
  --p503 P         answer P of the requests with 503 Service Unavailable and Retry-After
  --retry-after S  the Retry-After of those answers, in seconds (default 1)
  --fail-rate P    P of the tasks end Fail ("injected failure"), their credits given back
  --latency MS     add MS milliseconds to every answer, or MIN-MAX for a uniform spread
  --credits N      credit balance, one per second of video (default unlimited);
                   with --data-dir, only for a new DIR: later starts keep its balance
  --big-ids        hand out ids above 2^53 to test clients for lost digits
  --data-dir DIR   keep assets, tasks, ids and credits in DIR, so that a sandbox started
                   again on DIR (any port, even after kill -9) knows every id it handed out
                   and finishes the tasks it had (default: nothing kept after exit)
  --log-level LEVEL  info: one line per request (default); warn, error: problems only;
                   silent: nothing; debug: pino's JSON lines, with every field, instead

Exit codes: 0 on a clean stop (SIGINT, SIGTERM), 2 bad options or the port in use.`,
  options: {
    port: { type: "string" },
    key: { type: "string" },
    slots: { type: "string" },
    "time-scale": { type: "string" },
    jitter: { type: "string" },
    drift: { type: "string" },
    seed: { type: "string" },
    p429: { type: "string" },
    p503: { type: "string" },
    "retry-after": { type: "string" },
    "fail-rate": { type: "string" },
    latency: { type: "string" },
    credits: { type: "string" },
    "big-ids": { type: "boolean" },
    "data-dir": { type: "string" },
    "log-level": { type: "string" },
  },
  async run(args: ParsedArgs, io: CliIO): Promise<number> {
    if (args.positionals.length > 0) throw new UsageError(`unexpected argument '${args.positionals[0]}'`);
    const apiKey = stringOption(args, "key") ?? makeApiKey();
    const level = logLevelOption(args);
    // Made here rather than by the sandbox so the logger knows the key to scrub from its lines. JSON
    // lines for --log-level debug (for machines); otherwise a line per request, for a person.
    const logger = makeLogger({
      level: level === "info" ? "warn" : level,
      secrets: [apiKey],
      destination: level === "debug" ? io.stderr : readableLogLines(io.stderr),
    });
    const onRequest =
      level === "info"
        ? (request: SandboxRequest) => io.stderr.write(formatRequestLine(request, new Date()))
        : undefined;
    const port = numberOption(args, "port");
    const slots = numberOption(args, "slots");
    const timeScale = numberOption(args, "time-scale");
    const credits = numberOption(args, "credits");
    const dataDir = stringOption(args, "data-dir");
    if (dataDir !== undefined && dataDir.trim() === "") throw new UsageError("--data-dir expects a folder");
    const variation = variationOptions(args);
    const sandbox = await startSandbox({
      ...(port !== undefined ? { port } : {}),
      apiKey,
      ...(slots !== undefined ? { slots } : {}),
      ...(timeScale !== undefined ? { timeScale } : {}),
      ...variation,
      ...(credits !== undefined ? { credits } : {}),
      bigIds: args.values["big-ids"] === true,
      // Restarted without a data dir, it must not hand out again the ids its clients still hold.
      clockIds: true,
      ...(dataDir !== undefined ? { dataDir: resolve(io.cwd, dataDir), persist: true } : {}),
      logger,
      ...(onRequest ? { onRequest } : {}),
    });
    try {
      io.stdout.write(`export REEL_BASE_URL=${sandbox.baseUrl}\nexport REEL_API_KEY=${sandbox.apiKey}\n`);
      if (level === "info") {
        io.stderr.write(`${clock(new Date())}  sandbox listening on ${sandbox.baseUrl} (Ctrl-C to stop)\n`);
      }
      await waitForAbort(io.signal);
    } finally {
      await sandbox.close();
    }
    return EXIT.ok;
  },
};
