// `reel forget MANIFEST...`: drops manifests from the reports of the output folder. results.jsonl and
// index.html list every manifest run into the folder, not only the last run's (report/folder-rows.ts),
// so a manifest deleted from the project stays listed until the user says it is gone. Nothing on disk
// is deleted (its videos and records stay in OUT/<name>/), nor any job in the state (the record of
// what was paid): a run of the manifest lists it again, and pays nothing for what was made.
import { existsSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";
import { didYouMean } from "../edit-distance.js";
import { ReelError } from "../errors/reel-error.js";
import { UsageError } from "../errors/usage.js";
import { isManifestFile, loadManifests, nameFromFileName } from "../manifest/index.js";
import { REPORT_NAME, RESULTS_NAME } from "../output/layout.js";
import { lockOutDir } from "../output/out-dir.js";
import { outFolderOf } from "../output/out-folder.js";
import { plural } from "../plural.js";
import { folderRows } from "../report/folder-rows.js";
import { writeHtmlReport } from "../report/html-report.js";
import { writeResults } from "../report/results.js";
import { canonicalBaseUrl } from "../service-contract/base-url.js";
import { decisionsByVersion } from "../state/job-store.js";
import { openJobStore } from "../state/open-job-store.js";
import { shownPath } from "../user-path.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { lastServiceOf } from "./read-state.js";
import { refuseSandboxWithBaseUrl, sandboxServiceId } from "./service-options.js";
import {
  envSetting,
  flagValue,
  withProjectRoot,
  type Workplace,
  workplaceJson,
  workplaceLine,
  workplaceOf,
} from "./workplace.js";

const USAGE = `Usage: reel forget MANIFEST... [--out DIR] [--state FILE | --store URL]
                          [--base-url URL | --sandbox] [--json]

MANIFEST: a manifest's name, as the reports show it (its folder under OUT), or its file, which
may be deleted already: its name is then its file name without .yaml (give the name if the file
had name: of its own).

OUT/results.jsonl and OUT/index.html list every manifest run into OUT, not only the last run's.
forget drops these from both, for a manifest deleted from the project. Nothing on disk is deleted:
its videos and records stay in OUT/<name>/ (delete the folder yourself if you want them gone), and
its jobs stay in the state, so running it again lists it again and pays nothing for what was made.

Options:
  --out DIR        output folder (env REEL_OUT; default: the project's)
  --state FILE     state file (env REEL_STATE; default: the project's)
  --store URL      the shared store on PostgreSQL (env REEL_STORE)
  --base-url URL   the service whose jobs the rewritten reports show (env REEL_BASE_URL; default:
                   the project's, else the one the state file used last)
  --sandbox        the sandbox's jobs
  --json           machine-readable output on stdout

Exit codes: 0 forgotten, 2 a manifest the reports do not list, or bad options (nothing changed).`;

export const forgetCommand: Command = {
  name: "forget",
  usage: USAGE,
  options: {
    out: { type: "string" },
    state: { type: "string" },
    store: { type: "string" },
    "base-url": { type: "string" },
    sandbox: { type: "boolean" },
    json: { type: "boolean" },
  },
  run: runForget,
};

async function runForget(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length === 0) {
    throw new UsageError("name the manifests to forget: reel forget NAME|FILE...");
  }
  const place = workplaceOf(args.positionals, args, io);
  const json = args.values.json === true;
  const shown = (path: string): string => shownPath(io.cwd, path);
  const out = shown(place.outDir);
  if (!json) io.stderr.write(`reel forget: ${workplaceLine(place, io.cwd, existsSync(place.statePath))}\n`);
  const names = [
    ...new Set((await Promise.all(args.positionals.map((given) => namesOf(given, io, place)))).flat()),
  ];
  const service = serviceOf(args, io, place);
  if (service === undefined)
    throw new UsageError(`nothing was run into ${out} with this state: nothing to forget`);
  const store = await openJobStore(place.statePath, { baseUrl: service }, place.storeUrl);
  const outKey = outFolderOf(place.outDir).key;
  const counts = new Map<string, number>();
  try {
    const known = await store.outManifests(outKey);
    for (const name of names) {
      if (known.includes(name)) continue;
      const near = didYouMean(name, known);
      throw new UsageError(
        `no manifest '${name}' in the reports of ${out}${near ? `; did you mean '${near}'?` : ""} (${known.length > 0 ? `they list: ${known.join(", ")}` : "they list none"})`,
      );
    }
    // Under the folder's lock, as a run writes them: no run rewrites the reports meanwhile.
    const lock = existsSync(place.outDir) ? lockForReports(place.outDir) : undefined;
    try {
      const before = await folderRows(store, place.outDir, [], [], []);
      for (const name of names) {
        counts.set(name, before.rows.filter((row) => row.manifest === name).length);
        await store.forgetOutManifest(outKey, name);
      }
      await store.flush();
      if (lock) {
        const { rows } = await folderRows(store, place.outDir, [], [], []);
        // The videos left keep their decisions, as a run writes them.
        const decisions = decisionsByVersion(await store.latestDecisions());
        await writeResults(place.outDir, rows, new Set(), decisions);
        await writeHtmlReport(place.outDir, rows, { decisions });
      }
    } finally {
      lock?.release();
    }
  } finally {
    await store.close();
  }
  if (json) {
    io.stdout.write(`${JSON.stringify({ ok: true, ...workplaceJson(place), forgotten: names })}\n`);
    return EXIT.ok;
  }
  for (const name of names) {
    io.stderr.write(
      `reel forget: ${name} dropped from ${shown(resolve(place.outDir, RESULTS_NAME))} and ${shown(resolve(place.outDir, REPORT_NAME))} (${plural(counts.get(name) ?? 0, "video")} listed); its files in ${shown(resolve(place.outDir, name))}/ and its jobs in the state are kept.\n`,
    );
  }
  return EXIT.ok;
}

/**
 * The manifest names `given` stands for: a manifest file's (read from it), a deleted file's (its file
 * name), or a name as it is.
 */
async function namesOf(given: string, io: CliIO, place: Workplace): Promise<string[]> {
  if (existsSync(resolve(io.cwd, given))) {
    // Only the names are needed: media files are not read.
    const loaded = await loadManifests([given], {
      cwd: io.cwd,
      allowRead: withProjectRoot([], place),
      hashFile: () => Promise.resolve(""),
    });
    if (loaded.names.length === 0) {
      throw new UsageError(`no manifest name can be read from ${given}; give the manifest's name instead`);
    }
    return loaded.names;
  }
  const looksLikeFile =
    isManifestFile(given) || given.includes("/") || given.includes(sep) || isAbsolute(given);
  return [looksLikeFile ? nameFromFileName(given) : given];
}

/**
 * The service whose jobs the rewritten reports show, as a run would name it (--sandbox, --base-url,
 * REEL_BASE_URL, the project's baseUrl), else the one the state file used last.
 */
function serviceOf(args: ParsedArgs, io: CliIO, place: Workplace): string | undefined {
  refuseSandboxWithBaseUrl(args);
  if (args.values.sandbox === true) return sandboxServiceId(place.storeUrl);
  const given =
    flagValue(args.values, "base-url") ?? envSetting(io.env, "REEL_BASE_URL") ?? place.project?.baseUrl;
  if (given !== undefined) return canonicalBaseUrl(given);
  if (place.storeUrl !== undefined) {
    throw new UsageError(
      "with --store, say which service's jobs the reports show: --base-url URL or --sandbox",
    );
  }
  return existsSync(place.statePath) ? lastServiceOf(place.statePath) : undefined;
}

/** The output folder's lock; held by a run or watch, forget waits for nothing and changes nothing. */
function lockForReports(outDir: string): { release(): void } {
  try {
    return lockOutDir(outDir);
  } catch (error) {
    if (error instanceof ReelError && error.code === "E_OUT_LOCKED") {
      throw new ReelError(
        "E_OUT_LOCKED",
        `another reel process is writing into the output folder ${outDir}: forget once it has finished (nothing was changed).`,
      );
    }
    throw error;
  }
}
