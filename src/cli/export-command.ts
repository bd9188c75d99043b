// `reel export DIR [PATH...]`: the chosen videos (approved takes, or every finished one) copied into
// DIR under delivery names, with a delivery sheet beside them (src/export/). Reads the state as
// `status` does, so it may run beside a run.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../errors/usage.js";
import { chooseVideos, type VariableValue } from "../export/choose.js";
import { exportVideos } from "../export/export.js";
import { flagTemplate, type NameTemplate } from "../export/name-template.js";
import {
  choicesSaid,
  DEFAULT_NAME,
  DEFAULT_SHEET,
  DEFAULT_STATUS,
  type ExportScope,
  isChoice,
  SHEET_CHOICES,
  type SheetChoice,
  sheetsOf,
  STATUS_CHOICES,
} from "../export-rules.js";
import { checkAllowRead, loadManifests } from "../manifest/index.js";
import { makeJobFilter } from "../manifest/job-filter.js";
import { takeOf } from "../manifest/expand/takes.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { openStateToRead } from "./read-state.js";
import { readerServiceOf } from "./service-options.js";
import { withProjectRoot, workplaceOf } from "./workplace.js";

export const exportCommand: Command = {
  name: "export",
  usage: `Usage: reel export DIR [PATH...] [--name TEMPLATE] [--status success] [--prune] [options]

Copies the approved takes (the latest decision: approved) into DIR, hard-linked where DIR is on
the output folder's file system, each checked against the size and SHA-256 the state recorded, and
writes DIR/delivery.csv and DIR/delivery.jsonl: one line per video. Exporting again writes only
what changed. DIR/.reel-export.json lists what reel export wrote: no other file of DIR is touched.

PATH: manifest files or folders: only their videos, and their matrix variables as placeholders
and sheet columns (without PATH, the sheet has no variable columns).

Options:
  --name TEMPLATE    each video's name in DIR (default ${DEFAULT_NAME}): {manifest} {id} (with
                     the take: promo-en~2) {video} (without) {take} {seed} {model} {resolution}
                     {aspectRatio} {duration} {date} (the day it was made) and the job's variables
  --status success   every finished video, decided or not (default: approved, the approved takes)
  --only GLOB        only the jobs whose manifest/id matches (repeatable)
  --sheet csv|jsonl  write only that sheet (default: both)
  --prune            remove the videos an earlier export wrote that are no longer chosen
  --state FILE       state file (env REEL_STATE; default: the project's, as status finds it)
  --store URL        the shared store on PostgreSQL (env REEL_STORE)
  --base-url URL     only the jobs run against this service
  --sandbox          only the jobs run with --sandbox
  --allow-read DIR   let manifests read files under DIR too (repeatable)
  --json             a machine-readable summary on stdout

--name, --status and --sheet override export: in reel.yaml (name, status, sheet).

Exit codes: 0 done (also when nothing is chosen: nothing is written), 1 a chosen video missing or
damaged (nothing written), 2 bad options, names or a file of DIR in the way (nothing written).`,
  options: {
    name: { type: "string" },
    status: { type: "string" },
    only: { type: "string", multiple: true },
    sheet: { type: "string" },
    prune: { type: "boolean" },
    state: { type: "string" },
    store: { type: "string" },
    "base-url": { type: "string" },
    sandbox: { type: "boolean" },
    "allow-read": { type: "string", multiple: true },
    json: { type: "boolean" },
  },
  run: runExport,
};

async function runExport(args: ParsedArgs, io: CliIO): Promise<number> {
  const [dirArg, ...paths] = args.positionals;
  if (dirArg === undefined)
    throw new UsageError("reel export needs DIR, the folder to deliver into: reel export DIR [PATH...]");
  const dir = resolve(io.cwd, dirArg);
  const json = args.values.json === true;
  const status = args.values.status as string | undefined;
  if (status !== undefined && !isChoice(STATUS_CHOICES, status))
    throw new UsageError(
      `--status takes ${choicesSaid(STATUS_CHOICES)} (approved takes, or every finished video), not ${JSON.stringify(status)}`,
    );
  const sheetArg = args.values.sheet as string | undefined;
  if (sheetArg !== undefined && !isChoice(SHEET_CHOICES, sheetArg))
    throw new UsageError(`--sheet takes ${choicesSaid(SHEET_CHOICES)}, not ${JSON.stringify(sheetArg)}`);
  const only = makeJobFilter((args.values.only as string[] | undefined) ?? []);
  const nameArg = args.values.name as string | undefined;

  const place = workplaceOf(paths, args, io);
  // Each setting from its flag, else the project's export:, else the default.
  const fromFile = place.project?.export;
  const scope: ExportScope = status ?? fromFile?.status ?? DEFAULT_STATUS;
  const sheets = sheetsOf((sheetArg as SheetChoice | undefined) ?? fromFile?.sheet ?? DEFAULT_SHEET);
  const template: NameTemplate =
    nameArg !== undefined
      ? flagTemplate(nameArg)
      : fromFile?.name !== undefined
        ? {
            text: fromFile.name.template,
            said: `${fromFile.name.at}: export.name ${JSON.stringify(fromFile.name.template)}`,
            fix: "; fix export.name in the project file, or give --name",
          }
        : flagTemplate(DEFAULT_NAME);
  let inPaths: ((key: string) => boolean) | undefined;
  const variables = new Map<string, Readonly<Record<string, VariableValue>>>();
  if (paths.length > 0) {
    const allowRead = (args.values["allow-read"] as string[] | undefined) ?? [];
    await checkAllowRead(allowRead, io.cwd);
    const loaded = await loadManifests(paths, {
      cwd: io.cwd,
      allowRead: withProjectRoot(allowRead, place),
      hashFile: () => Promise.resolve(""),
    });
    if (loaded.manifests.length === 0)
      throw new UsageError(`no readable manifest in ${paths.join(" ")}; run 'reel validate' to see why`);
    // By video, not by job: a retake (mug~3 after takes: 2) is a job no manifest writes, yet it is
    // a take of the manifest's video and carries that video's variables.
    const videos = new Set<string>();
    for (const manifest of loaded.manifests)
      for (const job of manifest.jobs) {
        videos.add(takeOf(job.key).video);
        if (job.variables !== undefined) variables.set(takeOf(job.key).video, job.variables);
      }
    inPaths = (key) => videos.has(takeOf(key).video);
  }
  if (place.storeUrl === undefined && !existsSync(place.statePath)) return nothing(io, json, scope, dir);
  const baseUrl = readerServiceOf(args, place.storeUrl);
  const store = await openStateToRead(place.statePath, baseUrl, place.storeUrl);
  let items: ReturnType<typeof chooseVideos>;
  try {
    items = chooseVideos(await store.listLatestJobs(), await store.latestDecisions(), {
      scope,
      only: (key) => only(key) && (inPaths?.(key) ?? true),
      outDir: place.outDir,
      variablesOf: (key) => variables.get(takeOf(key).video),
    });
  } finally {
    await store.close();
  }
  if (items.length === 0) return nothing(io, json, scope, dir);

  const outcome = await exportVideos({ dir, items, template, sheets, prune: args.values.prune === true });
  if (json) {
    io.stdout.write(`${JSON.stringify({ ok: true, dir, ...outcome })}\n`);
    return EXIT.ok;
  }
  const written = outcome.linked.length + outcome.copied.length;
  const lines = [
    `exported ${outcome.files.length} video${outcome.files.length === 1 ? "" : "s"} to ${dirArg}: ${written} written (${outcome.linked.length} hard-linked, ${outcome.copied.length} copied), ${outcome.unchanged.length} unchanged`,
    outcome.sheets.length > 0 ? `wrote ${outcome.sheets.join(", ")}` : "sheets unchanged",
    ...outcome.removed.map((f) => `removed ${f} (no longer chosen)`),
    ...(outcome.kept.length > 0
      ? [
          `kept ${outcome.kept.length} file(s) an earlier export wrote and no longer chosen (--prune removes them)`,
        ]
      : []),
    ...outcome.left.map((f) => `left ${f}: changed since reel export wrote it`),
  ];
  io.stdout.write(`${lines.join("\n")}\n`);
  return EXIT.ok;
}

function nothing(io: CliIO, json: boolean, scope: ExportScope, dir: string): number {
  if (json) {
    io.stdout.write(`${JSON.stringify({ ok: true, dir, files: [], nothing: true })}\n`);
    return EXIT.ok;
  }
  io.stdout.write(
    scope === "approved"
      ? "Nothing to export: no approved take. Approve takes (reel approve, reel review), or export every finished video with --status success. Nothing was written.\n"
      : "Nothing to export: no finished video. Nothing was written.\n",
  );
  return EXIT.ok;
}
