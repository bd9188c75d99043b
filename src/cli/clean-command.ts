// `reel clean [PATH...]`: removes the videos of rejected takes and of old versions from OUT, keeping
// their records and the store's rows (src/review/clean.ts says what goes). Refused while a run or
// watch holds the state (docs/review.md, "Cleaning up").
import { UsageError } from "../errors/usage.js";
import { outFolderOf } from "../output/out-folder.js";
import { decisionFieldsOf } from "../output/decision-fields.js";
import { checkCandidates, cleanCandidates, type Removable, removeFiles } from "../review/clean.js";
import { type StateLock, acquireLock } from "../state/sqlite/db/lock.js";
import { StateLockedError } from "../errors/state.js";
import type { JobRow } from "../state/job-store.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { describeDecision } from "./decide-command.js";
import { EXIT } from "./exit-codes.js";
import { manifestsNamed } from "./manifests-named.js";
import { MAX_VIDEOS_OPTION, maxVideosUsage } from "./max-videos.js";
import { formatBytes } from "./plan-text.js";
import { openStateToRead } from "./read-state.js";
import { runnersOf } from "./runners-view.js";
import { findService, serviceFlag } from "./review-target.js";
import { workplaceLine } from "./workplace.js";

export const cleanCommand: Command = {
  name: "clean",
  usage: `Usage: reel clean [PATH...] [--dry-run] [options]

Removes from the output folder the videos of rejected takes (the latest decision on the current
take: rejected) and of old versions kept beside the current one (<id>.<hash>.mp4; one approved is
kept). Only a video reel wrote and still as it wrote it (the size and hash the state recorded) is
removed; anything else is left, and said. Records (<id>.json) and the state's rows are kept, and a
later run neither downloads nor generates a removed video again.

PATH: manifest files or folders, to clean only their manifests' videos.

Options:
  --dry-run          list what would be removed and what it would free; remove nothing
  --sandbox          the jobs run with --sandbox
  --base-url URL     the jobs run against this service (env REEL_BASE_URL; default: the one
                     service the state has jobs of)
  --state FILE       state file (env REEL_STATE; default: the project's, found from PATH or the
                     current folder as run finds it)
  --store URL        the shared store on PostgreSQL (env REEL_STORE)
  --out DIR          the output folder (env REEL_OUT; default: the project's)
  --allow-read DIR   let manifests read files under DIR too (repeatable)
${maxVideosUsage(21)}
  --json             machine-readable output on stdout

Refused while a run or watch uses the state (it may be writing into the output folder).

Exit codes: 0 done (also when nothing was to remove), 2 bad options, a state that cannot be read,
or a run or watch using it: nothing removed.`,
  options: {
    "dry-run": { type: "boolean" },
    sandbox: { type: "boolean" },
    "base-url": { type: "string" },
    state: { type: "string" },
    store: { type: "string" },
    out: { type: "string" },
    "allow-read": { type: "string", multiple: true },
    ...MAX_VIDEOS_OPTION,
    json: { type: "boolean" },
  },
  run: runClean,
};

const BUSY = "a run or watch may be writing into the output folder; clean once it ends. Nothing was removed";

async function runClean(args: ParsedArgs, io: CliIO): Promise<number> {
  const dryRun = args.values["dry-run"] === true;
  const json = args.values.json === true;
  const { place, baseUrl } = await findService("clean", args.positionals, args, io);
  const loaded = await manifestsNamed(args, io, place);
  const manifests = loaded && new Set(loaded.names);
  io.stderr.write(`reel clean: ${workplaceLine(place, io.cwd, true)}\n`);
  // Held while the files are chosen and removed: no run starts meanwhile (it is refused, as beside
  // another run), so none moves a video under a name being removed or checks one being removed.
  let lock: StateLock | undefined;
  if (place.storeUrl === undefined) {
    try {
      lock = acquireLock(place.statePath);
    } catch (error) {
      if (!(error instanceof StateLockedError)) throw error;
      throw new UsageError(
        `another reel process${error.holder ? ` (${error.holder})` : ""} is using the state file ${place.statePath}: ${BUSY}`,
        { cause: error },
      );
    }
  }
  try {
    const out = outFolderOf(place.outDir);
    const store = await openStateToRead(place.statePath, baseUrl, place.storeUrl);
    let candidates: ReturnType<typeof cleanCandidates>;
    try {
      const running = (await runnersOf(store))?.filter((runner) => runner.state === "running") ?? [];
      if (running.length > 0) {
        const who = running.map((runner) => `${runner.host} pid ${runner.pid}`).join(", ");
        throw new UsageError(`${running.length} runner(s) of the store are running (${who}): ${BUSY}`);
      }
      const inScope = (row: JobRow): boolean => manifests === undefined || manifests.has(row.manifest);
      const current = new Map((await store.listLatestJobs()).map((row) => [row.job_key, row as JobRow]));
      const rows = (await store.listJobs()).filter(inScope);
      candidates = cleanCandidates(rows, current, await store.latestDecisions(), out);
    } finally {
      await store.close();
    }
    const { removable, left } = await checkCandidates(place.outDir, candidates);
    const removed = dryRun ? removable : await removeFiles(place.outDir, removable);
    const bytes = removed.reduce((sum, item) => sum + item.bytes, 0);
    if (json) {
      const output = {
        ok: true,
        dryRun,
        service: baseUrl,
        removed: removed.map((item) => ({
          file: item.file,
          job: item.row.job_key,
          specHash: item.row.spec_hash,
          why: item.why,
          bytes: item.bytes,
          ...decisionFieldsOf(item.decision),
        })),
        bytes,
        left: left.map((item) => ({ file: item.file, job: item.row.job_key, why: item.why })),
      };
      io.stdout.write(`${JSON.stringify(output)}\n`);
      return EXIT.ok;
    }
    const verb = dryRun ? "would remove" : "removed";
    const lines = [
      ...removed.map((item) => `${verb} ${item.file} (${reasonText(item)}), ${formatBytes(item.bytes)}`),
      ...left.map((item) => `left ${item.file}: ${item.why}`),
    ];
    lines.push(
      removed.length === 0
        ? `nothing to remove (${serviceFlag(baseUrl)})`
        : `${dryRun ? "would free" : "freed"} ${formatBytes(bytes)} (${removed.length} video${removed.length === 1 ? "" : "s"}); records kept`,
    );
    io.stdout.write(`${lines.join("\n")}\n`);
    return EXIT.ok;
  } finally {
    lock?.release();
  }
}

function reasonText(item: Removable): string {
  return item.why === "rejected" ? describeDecision(decisionFieldsOf(item.decision)) : "an old version";
}
