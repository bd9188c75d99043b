// `reel review [PATH...]`: the review page, served on 127.0.0.1 until Ctrl-C. It opens the store to
// review (no lock, no runner registered: a run or watch goes on beside it) and serves the takes of
// one service, their videos from OUT, and the decisions and retakes reviewers make there.
import { spawn } from "node:child_process";
import { basename } from "node:path";
import { UsageError } from "../errors/usage.js";
import { ManifestVars } from "../review/server/manifest-vars.js";
import { startReviewServer } from "../review/server/server.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { openStateToReview } from "./read-state.js";
import { findService } from "./review-target.js";
import { reviewerGiven } from "./reviewer.js";
import { withProjectRoot, workplaceLine } from "./workplace.js";

export const reviewCommand: Command = {
  name: "review",
  usage: `Usage: reel review [PATH...] [--port N] [--open] [options]

Serves the review page on 127.0.0.1 and prints its address, with a token in it: only a browser
given that address may use the page. Runs until Ctrl-C. The page shows the takes of each video side
by side; decisions and retakes made there are recorded in the store, as reel approve, reject and
retake record them, beside any run or watch using it.

PATH: manifest files or folders: the page shows their jobs only, with their matrix variables
(default: every job of the state found from the current folder, with the variables of the
project's manifests).

Options:
  --port N           the port (default: a free one)
  --open             open the page in the browser
  --reviewer NAME    who decides (env REEL_REVIEWER; default: the page asks once)
  --sandbox          the jobs run with --sandbox
  --base-url URL     the jobs run against this service (env REEL_BASE_URL; default: the one
                     service the state has jobs of)
  --state FILE       state file (env REEL_STATE)
  --store URL        the shared store on PostgreSQL (env REEL_STORE)
  --out DIR          the output folder whose videos the page shows (env REEL_OUT)

Exit codes: 0 stopped by Ctrl-C, 2 no state, no jobs, or bad options.`,
  options: {
    port: { type: "string" },
    open: { type: "boolean" },
    reviewer: { type: "string" },
    sandbox: { type: "boolean" },
    "base-url": { type: "string" },
    state: { type: "string" },
    store: { type: "string" },
    out: { type: "string" },
  },
  run: runReview,
};

function portOf(args: ParsedArgs): number {
  const given = args.values.port;
  if (given === undefined) return 0;
  const port = Number(given);
  if (typeof given !== "string" || !/^\d+$/.test(given) || port > 65535) {
    throw new UsageError(`--port should be a port number from 0 to 65535 (got '${String(given)}')`);
  }
  return port;
}

/** Opens `url` in the desktop's browser; a failure only leaves the user to open it. */
function openBrowser(url: string): void {
  const [command, ...args] =
    process.platform === "darwin"
      ? ["open", url]
      : process.platform === "win32"
        ? ["cmd", "/c", "start", "", url]
        : ["xdg-open", url];
  try {
    const child = spawn(command!, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // nothing to do: the address is printed
  }
}

async function runReview(args: ParsedArgs, io: CliIO): Promise<number> {
  const port = portOf(args);
  const reviewer = reviewerGiven(args, io);
  const { place, baseUrl } = await findService("review", args.positionals, args, io);
  io.stderr.write(`reel review: ${workplaceLine(place, io.cwd, true)}\n`);
  // PATH limits the page to its manifests; without it, the project's manifests lend their variables.
  const limit = args.positionals.length > 0;
  const manifests = new ManifestVars({
    paths: limit ? args.positionals : place.anchor.kind === "new" ? [] : [place.anchor.dir],
    cwd: io.cwd,
    allowRead: withProjectRoot([], place),
    limit,
  });
  await manifests.load().catch(() => undefined);
  const store = await openStateToReview(place.statePath, baseUrl, place.storeUrl);
  try {
    const server = await startReviewServer({
      store,
      baseUrl,
      outDir: place.outDir,
      port,
      title: basename(place.anchor.dir),
      manifests,
      ...(reviewer === undefined ? {} : { reviewer }),
    }).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") throw new UsageError(`port ${port} is in use: give another --port, or none`);
      throw error;
    });
    io.stdout.write(`reel review: ${server.url}\n`);
    if (args.values.open === true) openBrowser(server.url);
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await server.close();
  } finally {
    await store.close();
  }
  return EXIT.ok;
}
