// `reel export`: the chosen videos into DIR under their delivery names, then the delivery sheet.
// Everything that can refuse the export is checked before the first write: every name (valid, one
// per video), every source (still the video reel recorded), every file already in DIR (ours, by the
// ledger, or left alone and refused); so a refused export writes nothing.
import { existsSync } from "node:fs";
import { lstat, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ReelError } from "../errors/reel-error.js";
import { UsageError } from "../errors/usage.js";
import { sha256File } from "../sha256.js";
import { ensureRealDir, writeFileAtomic } from "../output/atomic-write.js";
import { checkSavedVideo } from "../output/video-check.js";
import type { ExportItem } from "./choose.js";
import { type Ledger, readLedger, writeLedger } from "./ledger.js";
import { nameProblem } from "../export-rules.js";
import { type NameTemplate, placeholderValues, renderName } from "./name-template.js";
import { inParallel } from "./in-parallel.js";
import { ensureFoldersIn, placeVideo } from "./place-file.js";
import type { SheetFormat } from "../export-rules.js";
import { buildSheet, SHEET_NAMES, type SheetLine, sheetCsv, sheetJsonl } from "./sheet.js";

export interface ExportOptions {
  readonly dir: string;
  readonly items: readonly ExportItem[];
  readonly template: NameTemplate;
  readonly sheets: readonly SheetFormat[];
  readonly prune: boolean;
}

export interface ExportOutcome {
  /** Every exported video: its name in DIR and its job. */
  readonly files: readonly { readonly file: string; readonly job: string }[];
  readonly linked: readonly string[];
  readonly copied: readonly string[];
  readonly unchanged: readonly string[];
  /** Files an earlier export wrote whose video is no longer chosen: removed with --prune, else kept. */
  readonly removed: readonly string[];
  readonly kept: readonly string[];
  /** Of those, files changed since reel export wrote them: never removed. */
  readonly left: readonly string[];
  readonly sheets: readonly string[];
}

interface Planned {
  readonly item: ExportItem;
  readonly file: string;
  readonly size: number;
  readonly sha256: string;
  readonly write: boolean;
}

export async function exportVideos(options: ExportOptions): Promise<ExportOutcome> {
  const { dir } = options;
  const named = nameVideos(options.items, options.template);
  const sources = await checkSources(named);
  const ledger = existsSync(dir) ? readLedger(dir) : (new Map() as Ledger);
  const planned = await planTargets(dir, sources, ledger);

  await ensureRealDir(dir, { mayBeLink: true });
  const linked: string[] = [];
  const copied: string[] = [];
  let ledgerChanged = false;
  try {
    // Folders first, one at a time (two videos of one folder would make it twice), then the files.
    const toWrite = planned.filter((p) => p.write);
    for (const folder of new Set(toWrite.map((p) => p.file.split("/").slice(0, -1).join("/"))))
      if (folder !== "") await ensureFoldersIn(dir, `${folder}/x`);
    await inParallel(toWrite, async (p) => {
      const placed = await placeVideo(
        p.item.source,
        join(dir, p.file),
        p.sha256,
        p.size,
        p.item.row.file_stamp,
      );
      ledger.set(p.file, { job: p.item.row.job_key, size: p.size, sha256: p.sha256, stamp: placed.stamp });
      ledgerChanged = true;
      (placed.how === "linked" ? linked : copied).push(p.file);
    });
  } finally {
    // What was written is recorded even when a later file failed: it stays ours to replace or prune.
    if (ledgerChanged) await writeLedger(dir, ledger);
  }

  const chosen = new Set(planned.map((p) => p.file));
  const removed: string[] = [];
  const kept: string[] = [];
  const left: string[] = [];
  for (const [file, entry] of [...ledger]) {
    if (chosen.has(file)) continue;
    const check = await checkSavedVideo(join(dir, file), {
      file_size: entry.size,
      file_sha256: entry.sha256,
      file_stamp: entry.stamp,
    });
    if (check.kind === "missing") {
      ledger.delete(file);
      ledgerChanged = true;
    } else if (check.kind === "changed") left.push(file);
    else if (options.prune) {
      await unlink(join(dir, file));
      ledger.delete(file);
      ledgerChanged = true;
      removed.push(file);
    } else kept.push(file);
  }

  const sheet = buildSheet(
    planned.map((p): SheetLine => ({ item: p.item, file: p.file, bytes: p.size, sha256: p.sha256 })),
  );
  const sheets: string[] = [];
  for (const format of options.sheets) {
    const name = SHEET_NAMES[format];
    const text = format === "csv" ? sheetCsv(sheet) : sheetJsonl(sheet);
    const now = await readFile(join(dir, name), "utf8").catch(() => undefined);
    if (now === text) continue;
    await writeFileAtomic(join(dir, name), text);
    sheets.push(name);
  }
  if (ledgerChanged) await writeLedger(dir, ledger);
  return {
    files: planned.map((p) => ({ file: p.file, job: p.item.row.job_key })),
    linked: linked.sort(),
    copied: copied.sort(),
    unchanged: planned.filter((p) => !p.write).map((p) => p.file),
    removed,
    kept,
    left,
    sheets,
  };
}

/** Each video's name in DIR, all checked: valid, and one per video (compared as a case-blind disk would). */
function nameVideos(
  items: readonly ExportItem[],
  template: NameTemplate,
): { item: ExportItem; file: string }[] {
  const fix = template.fix ?? "";
  const byName = new Map<string, { item: ExportItem; file: string }>();
  const named = items.map((item) => {
    const file = renderName(template, placeholderValues(item), item.row.job_key);
    const problem = nameProblem(file);
    if (problem !== undefined)
      throw new UsageError(
        `${template.said} names ${item.row.job_key} ${JSON.stringify(file)}, which ${problem}${fix}. Nothing was written.`,
      );
    const other = byName.get(file.toLowerCase());
    if (other !== undefined)
      throw new UsageError(
        `${template.said} gives ${other.item.row.job_key} and ${item.row.job_key} one name, ${JSON.stringify(other.file === file ? file : `${other.file}" and "${file}`)}${other.file === file ? "" : " (the same to a case-blind file system)"}. Add a placeholder that tells them apart ({id}, {take}, a variable)${fix}. Nothing was written.`,
      );
    const entry = { item, file };
    byName.set(file.toLowerCase(), entry);
    return entry;
  });
  return named;
}

/** The size and SHA-256 each source must have; refuses the export naming every missing or damaged one. */
async function checkSources(
  named: readonly { item: ExportItem; file: string }[],
): Promise<{ item: ExportItem; file: string; size: number; sha256: string }[]> {
  const bad: string[] = [];
  const checked = await inParallel(named, async ({ item, file }) => {
    const check = await checkSavedVideo(item.source, item.row);
    if (check.kind !== "same") {
      bad.push(
        `${item.row.job_key}: ${item.source} is ${check.kind === "missing" ? "missing" : "not the video reel wrote (its size or SHA-256 changed)"}`,
      );
      return undefined;
    }
    const { row } = item;
    // A video saved by an earlier reel has no recorded hash: its content now is what is delivered.
    const sha256 = row.file_sha256 ?? (await sha256File(item.source));
    const size = row.file_size ?? (await lstat(item.source)).size;
    return { item, file, size, sha256 };
  });
  const out = checked.filter((c) => c !== undefined);
  if (bad.length > 0)
    throw new ReelError(
      "E_EXPORT_SOURCE",
      `${bad.length === 1 ? "a chosen video cannot" : `${bad.length} chosen videos cannot`} be exported:\n  ${bad.sort().join("\n  ")}\nRerun 'reel run' to fetch them again, or leave them out with --only. Nothing was written.`,
    );
  return out;
}

/** Which names to write: a new name, or one of ours whose video changed; a file not ours is refused. */
async function planTargets(
  dir: string,
  sources: readonly { item: ExportItem; file: string; size: number; sha256: string }[],
  ledger: Ledger,
): Promise<Planned[]> {
  const refused: string[] = [];
  const planned = await inParallel(sources, async (s): Promise<Planned | undefined> => {
    const path = join(dir, s.file);
    const info = await lstat(path).catch(() => undefined);
    const entry = ledger.get(s.file);
    if (info === undefined) return { ...s, write: true };
    const ours =
      entry !== undefined &&
      info.isFile() &&
      (
        await checkSavedVideo(path, {
          file_size: entry.size,
          file_sha256: entry.sha256,
          file_stamp: entry.stamp,
        })
      ).kind === "same";
    if (!ours) {
      refused.push(
        `${s.file} (for ${s.item.row.job_key}) ${entry === undefined ? "was not written by reel export" : "changed since reel export wrote it"}`,
      );
      return undefined;
    }
    return { ...s, write: entry.sha256 !== s.sha256 };
  });
  if (refused.length > 0)
    throw new UsageError(
      `${dir} holds files reel export leaves alone:\n  ${refused.sort().join("\n  ")}\nMove them, or choose another --name or DIR. Nothing was written.`,
    );
  return planned.filter((p) => p !== undefined);
}
