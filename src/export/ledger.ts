// `DIR/.reel-export.json`: what reel export wrote in DIR, and what each file held then. Only a file it
// names, still as written, is ever replaced or removed (`--prune`); every other file in DIR is the
// user's and is never touched.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../output/atomic-write.js";

export const LEDGER_NAME = ".reel-export.json";

export interface LedgerEntry {
  /** The job it was exported from (`manifest/id`). */
  readonly job: string;
  readonly size: number;
  readonly sha256: string;
  /** mtime:ctime:inode when written (video-check.ts stampOf): an unchanged file is not read again. */
  readonly stamp: string;
}

/** By name relative to DIR. */
export type Ledger = Map<string, LedgerEntry>;

const isEntry = (v: unknown): v is LedgerEntry => {
  const e = v as Partial<LedgerEntry> | null;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.job === "string" &&
    typeof e.size === "number" &&
    typeof e.sha256 === "string" &&
    typeof e.stamp === "string"
  );
};

/** The ledger in `dir`; empty when there is none, or it is not readable as one (nothing is then ours). */
export function readLedger(dir: string): Ledger {
  try {
    const value = JSON.parse(readFileSync(join(dir, LEDGER_NAME), "utf8")) as { files?: unknown };
    const files = typeof value.files === "object" && value.files !== null ? value.files : {};
    return new Map(Object.entries(files).filter((e): e is [string, LedgerEntry] => isEntry(e[1])));
  } catch {
    return new Map();
  }
}

export async function writeLedger(dir: string, ledger: Ledger): Promise<void> {
  const files = Object.fromEntries([...ledger].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  await writeFileAtomic(join(dir, LEDGER_NAME), `${JSON.stringify({ version: 1, files }, null, 2)}\n`);
}
