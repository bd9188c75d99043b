// The options every command that talks to the service takes (the README, "Options"), read from flags
// and the environment once, checked before any work, and turned into a client.
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import type { Dispatcher } from "undici";
import type { ClientOptions, ServiceClient } from "../client/index.js";
import type { PollTiming } from "../engine/poll-schedule.js";
import { DEFAULTS } from "../defaults.js";
import { UsageError } from "../errors/usage.js";
import { canonicalBaseUrl } from "../service-contract/base-url.js";
import type { Logger } from "../log/logger.js";
import type { CliIO, OptionsConfig, ParsedArgs } from "./command.js";
import { envSetting, flagValue, type Workplace } from "./workplace.js";

export { envSetting };

export const SERVICE_OPTIONS: OptionsConfig = {
  "base-url": { type: "string" },
  state: { type: "string" },
  out: { type: "string" },
  concurrency: { type: "string" },
  sandbox: { type: "boolean" },
  json: { type: "boolean" },
  store: { type: "string" },
};

/**
 * `--allow-private-sources`, of run and watch (and taken by plan, which fetches nothing): https
 * sources on loopback, link-local and private addresses are refused without it.
 */
export const PRIVATE_SOURCES_OPTION: OptionsConfig = { "allow-private-sources": { type: "boolean" } };

export const SERVICE_USAGE = `Service options:
  --base-url URL       the service's address (env REEL_BASE_URL); required unless --sandbox
  --sandbox            run against the built-in emulator of the service, in-process
  --state FILE         state file (env REEL_STATE; default: the project's, see below)
  --out DIR            output folder (env REEL_OUT; default: the project's, see below)
  --store URL          a shared store on PostgreSQL (env REEL_STORE), postgres://user@host/db; the
                       password from PGPASSWORD or ~/.pgpass. Any number of runners, on any
                       machines, share it: each job is sent once by one of them
  --concurrency N      generations in flight at once (env REEL_CONCURRENCY; default ${DEFAULTS.concurrency})
  --json               machine-readable output on stdout
The API key is read from the environment variable REEL_API_KEY, never from a flag.

Project: the state and output folder belong to the manifests, not to the current folder. Walking up
from the manifests' folder, the nearest reel.yaml (written by 'reel init') anchors them and sets
defaults (state, out, concurrency, baseUrl); else the nearest folder with a ${DEFAULTS.statePath};
else the current folder when it holds the manifests, or their common folder. Order: flags, then
REEL_* variables, then reel.yaml, then the defaults ${DEFAULTS.statePath} and ${DEFAULTS.outDir} there.`;

export interface ServiceSettings {
  readonly sandbox: boolean;
  readonly baseUrl: string | undefined;
  readonly apiKey: string | undefined;
  readonly statePath: string;
  readonly outDir: string;
  /** Where statePath and outDir came from (see workplace.ts). */
  readonly place: Workplace;
  /** The shared store on PostgreSQL, when one is used (place.storeUrl). */
  readonly storeUrl?: string;
  readonly concurrency: number;
  readonly json: boolean;
  /** --time-scale of run and watch: the in-process sandbox's seconds of Running per second of video. */
  readonly sandboxTimeScale?: number;
  /** --jitter of run and watch: how much the in-process sandbox's run times vary (0 to 0.9). */
  readonly sandboxJitter?: number;
}

export function positiveInteger(name: string, raw: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`expected ${name} to be a whole number from 1 up, got '${raw}'`);
  }
  return value;
}

/** `--sandbox` names a service of its own: with `--base-url` too, which one was meant is unknown. */
export function refuseSandboxWithBaseUrl(args: ParsedArgs): void {
  if (args.values.sandbox === true && args.values["base-url"] !== undefined) {
    throw new UsageError("--sandbox and --base-url exclude each other: the sandbox has its own address");
  }
}

/**
 * The service whose rows a reader (status, export) looks at, as run records it: the sandbox's with
 * --sandbox, the canonical --base-url, or undefined (every service's). Refuses both at once.
 */
export function readerServiceOf(args: ParsedArgs, storeUrl: string | undefined): string | undefined {
  refuseSandboxWithBaseUrl(args);
  if (args.values.sandbox === true) return sandboxServiceId(storeUrl);
  const given = args.values["base-url"];
  return given === undefined ? undefined : canonicalBaseUrl(given as string);
}

/**
 * --jitter J (run and watch): run times of the in-process sandbox vary by a factor in [1-J, 1+J], as
 * a real service's do. Only with --sandbox.
 */
function sandboxJitterOf(args: ParsedArgs, sandbox: boolean): number | undefined {
  const raw = args.values.jitter;
  if (raw === undefined) return undefined;
  if (!sandbox)
    throw new UsageError("--jitter only applies to --sandbox (it varies the built-in emulator's run times)");
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < 0 || value > 0.9) {
    throw new UsageError(
      `expected --jitter to be a number from 0 to 0.9 (run times vary by a factor in [1-J, 1+J]), got '${String(raw)}'`,
    );
  }
  return value;
}

/**
 * --time-scale X (run and watch): how slowly the in-process sandbox runs tasks, so a newcomer can
 * watch the display. Only with --sandbox: a real service keeps its own time.
 */
function sandboxTimeScaleOf(args: ParsedArgs, sandbox: boolean): number | undefined {
  const raw = args.values["time-scale"];
  if (raw === undefined) return undefined;
  if (!sandbox) {
    throw new UsageError(
      "--time-scale only applies to --sandbox (it slows the built-in emulator down); a real service keeps its own time",
    );
  }
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < 0 || value > 60) {
    throw new UsageError(
      `expected --time-scale to be a number from 0 to 60 (seconds a task runs per second of video), got '${String(raw)}'`,
    );
  }
  return value;
}

/**
 * The service's base URL as given, first found: --base-url, REEL_BASE_URL, the project file's
 * `baseUrl:`. Undefined when none is. `run`, `watch` and `plan` read it alike.
 */
export function givenBaseUrl(args: ParsedArgs, io: CliIO, place: Workplace): string | undefined {
  return flagValue(args.values, "base-url") ?? envSetting(io.env, "REEL_BASE_URL") ?? place.project?.baseUrl;
}

/** Reads and checks the service options. `needService` is false for commands that only read state. */
export function readServiceSettings(
  args: ParsedArgs,
  io: CliIO,
  needService: boolean,
  place: Workplace,
): ServiceSettings {
  const sandbox = args.values.sandbox === true;
  const baseUrl = givenBaseUrl(args, io, place);
  const apiKey = io.env.REEL_API_KEY;
  refuseSandboxWithBaseUrl(args);
  if (needService && !sandbox) {
    if (!baseUrl) {
      throw new UsageError(
        "no service address: give --base-url URL or set REEL_BASE_URL (or use --sandbox to try reel against the built-in emulator)",
      );
    }
    checkBaseUrl(baseUrl, apiKey);
    if (!apiKey) throw new UsageError("no API key: set the environment variable REEL_API_KEY (never a flag)");
    checkApiKey(apiKey);
  }
  const sandboxTimeScale = sandboxTimeScaleOf(args, sandbox);
  const sandboxJitter = sandboxJitterOf(args, sandbox);
  const concurrencyFlag = flagValue(args.values, "concurrency");
  const concurrencyRaw = concurrencyFlag ?? envSetting(io.env, "REEL_CONCURRENCY");
  // Named as the user gave it: a bad REEL_CONCURRENCY is not fixed by looking for a flag.
  const concurrencyName = concurrencyFlag === undefined ? "REEL_CONCURRENCY" : "--concurrency";
  return {
    sandbox,
    baseUrl: sandbox || baseUrl === undefined ? undefined : canonicalBaseUrl(baseUrl),
    apiKey: sandbox ? undefined : apiKey,
    statePath: place.statePath,
    outDir: place.outDir,
    place,
    ...(place.storeUrl !== undefined ? { storeUrl: place.storeUrl } : {}),
    concurrency:
      concurrencyRaw === undefined
        ? (place.project?.concurrency ?? DEFAULTS.concurrency)
        : positiveInteger(concurrencyName, concurrencyRaw),
    json: args.values.json === true,
    ...(sandboxTimeScale !== undefined ? { sandboxTimeScale } : {}),
    ...(sandboxJitter !== undefined ? { sandboxJitter } : {}),
  };
}

/**
 * Refuses a base URL that could not work, or that would put the key where it is stored: before any
 * work, so a typo costs one line rather than a run of failures. `apiKey`, when known, must not be in it.
 */
export function checkBaseUrl(baseUrl: string, apiKey: string | undefined): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url '${baseUrl}' is not a URL (expected e.g. https://api.example.com)`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    throw new UsageError(
      `--base-url must be https (plain http only on 127.0.0.1/localhost), got '${baseUrl}'`,
    );
  }
  // The key goes in the Authorization header only: in the address it would be stored in the state
  // file and shown by status. The message shows neither. (A placeholder key of a few letters would
  // match ordinary addresses.)
  if (apiKey && apiKey.length >= 8 && baseUrl.includes(apiKey)) {
    throw new UsageError(
      "--base-url contains the API key; give the service's address alone (the key is sent in a header, from REEL_API_KEY)",
    );
  }
  if (/\/v1\/?$/i.test(url.pathname)) {
    throw new UsageError(
      `--base-url should not end with /v1: reel adds the /v1 of each endpoint itself (give '${baseUrl.replace(/\/v1\/?$/i, "")}')`,
    );
  }
}

/**
 * A key that cannot go into an Authorization header as it is: caught here, before any work, rather
 * than as a refusal of every call. The message never shows the key.
 */
function checkApiKey(key: string): void {
  if (/[\r\n]/.test(key)) {
    throw new UsageError(
      "REEL_API_KEY contains a line break (often a carriage return from a file saved with Windows line endings); set it again without it",
    );
  }
  if (key !== key.trim()) {
    throw new UsageError("REEL_API_KEY starts or ends with spaces; set it again without them");
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\x00-\x1f\x7f]|[^\x00-\xff]/.test(key)) {
    throw new UsageError(
      "REEL_API_KEY contains a control character or a character outside Latin-1, which no HTTP header can carry; copy it again from the service's console",
    );
  }
}

/**
 * The service identity that state rows of `--sandbox` runs are scoped by. The in-process sandbox
 * keeps its data beside the state file, so its ids stay valid from one run to the next even though
 * it listens on a new port each time.
 */
export const SANDBOX_SERVICE_ID = "sandbox:local";

/**
 * The identity of `--sandbox` runs on a store: SANDBOX_SERVICE_ID in a state file; in a shared store
 * (`storeUrl`) this machine's, `sandbox:local@HOST`: another machine's sandbox has tasks and assets
 * of its own under the same ids, which this one must never follow, download or count as its own.
 * (All begin with SANDBOX_PREFIX: see state/service-address.ts.)
 */
export function sandboxServiceId(storeUrl: string | undefined, host: string = hostname()): string {
  return storeUrl === undefined ? SANDBOX_SERVICE_ID : `${SANDBOX_SERVICE_ID}@${host}`;
}

export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d+){3}$/.test(hostname);
}

/** `origin` under every name of this machine, same scheme and port. */
function loopbackOrigins(origin: URL): string[] {
  const port = origin.port === "" ? "" : `:${origin.port}`;
  return ["127.0.0.1", "localhost", "[::1]"].map((host) => `${origin.protocol}//${host}${port}`);
}

export interface ConnectedService {
  readonly client: ServiceClient;
  /**
   * The session's one HTTP dispatcher: the client's calls go through it, and it is what the engine's
   * downloads and remote sources are to take (EngineOptions). Closed by close().
   */
  readonly dispatcher: Dispatcher;
  /** The service identity the state rows are scoped by (the base URL, or sandboxServiceId). */
  readonly baseUrl: string;
  /** Origins whose files may be fetched over plain http. */
  readonly httpOrigins: readonly string[];
  readonly apiKey: string;
  /**
   * How eagerly to poll. A service on this machine (the sandbox) runs tasks in compressed time and
   * costs nothing to ask, so it is polled tightly; a remote one takes minutes per task and is
   * polled at most once a second per task and 10 times a second in all.
   */
  readonly polling: { readonly timing: PollTiming; readonly perSecond: number };
  close(): Promise<void>;
}

const LOCAL_POLLING = DEFAULTS.localPolling;
const REMOTE_POLLING = DEFAULTS.remotePolling;

/** A client for the configured service, starting the in-process sandbox for --sandbox. */
export async function connectService(
  settings: ServiceSettings,
  logger: Logger,
  onRetry?: ClientOptions["onRetry"],
  onAnswer?: ClientOptions["onAnswer"],
): Promise<ConnectedService> {
  // The HTTP client (undici) is loaded by the commands that call the service, not by every command.
  const { makeClient, makeDispatcher } = await import("../client/index.js");
  if (settings.sandbox) {
    const { startSandbox } = await import("../sandbox/index.js");
    // The sandbox keeps its assets and tasks beside the state file, so a rerun (after a Ctrl-C or a
    // kill -9) finds the tasks and assets the state file recorded, as it would on the real service.
    const sandbox = await startSandbox({
      dataDir: join(dirname(settings.statePath), "sandbox"),
      persist: true,
      ...(settings.sandboxTimeScale !== undefined ? { timeScale: settings.sandboxTimeScale } : {}),
      ...(settings.sandboxJitter !== undefined ? { jitter: settings.sandboxJitter } : {}),
    });
    const dispatcher = makeDispatcher();
    const client = makeClient({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      logger,
      onRetry,
      onAnswer,
      dispatcher,
    });
    return {
      client,
      dispatcher,
      baseUrl: sandboxServiceId(settings.storeUrl),
      httpOrigins: [new URL(sandbox.baseUrl).origin],
      apiKey: sandbox.apiKey,
      polling: LOCAL_POLLING,
      close: async () => {
        await client.close();
        // Before the sandbox: its server's close waits for the keep-alive connections to end.
        await dispatcher.close();
        await sandbox.close();
      },
    };
  }
  const baseUrl = settings.baseUrl!;
  const dispatcher = makeDispatcher();
  const client = makeClient({ baseUrl, apiKey: settings.apiKey!, logger, onRetry, onAnswer, dispatcher });
  const origin = new URL(baseUrl);
  return {
    client,
    dispatcher,
    baseUrl,
    // A local service (a standalone `reel sandbox`) serves its files over http too, under whatever
    // name of this machine it gives them (`localhost` in the base URL, `127.0.0.1` in its links).
    httpOrigins: isLoopback(origin.hostname) ? loopbackOrigins(origin) : [],
    apiKey: settings.apiKey!,
    polling: isLoopback(origin.hostname) ? LOCAL_POLLING : REMOTE_POLLING,
    close: async () => {
      await client.close();
      await dispatcher.close();
    },
  };
}
