// The rules of the logs folder's pruning and of a log's parts, on real files (the CLI's tests show
// them through the real binary): the bound on bytes, the window a log is in use by its last write,
// and a log cut with its earlier parts bounded whoever started the file.
import {
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { type LogPruning, logPartPath, pruneLogs } from "../../src/log/log-files.js";
import { RotatingFile } from "../../src/log/rotating-file.js";
import { tempDir } from "../helpers/temp-dir.js";

const HOUR = 3_600_000;
const RULES: LogPruning = { keepMs: 30 * 24 * HOUR, keptFiles: 100, keptBytes: 2_500, inUseMs: HOUR };
const GONE = 99_999_999;

function writeLog(dir: string, name: string, bytes: number, ageMs: number, now: number): string {
  const path = join(dir, name);
  writeFileSync(path, "x".repeat(bytes));
  const at = new Date(now - ageMs);
  utimesSync(path, at, at);
  return name;
}

it("keeps the newest logs up to the bytes bound, and any log written within the hour beyond it", async () => {
  const dir = await tempDir();
  const now = Date.now();
  const name = (minute: number): string =>
    `run-2026-01-01T00-${String(minute).padStart(2, "0")}-00-000Z-${GONE}.log`;
  const recent = writeLog(dir, name(0), 5_000, 10 * 60_000, now); // in use for all we know, and over the bound alone
  const newest = writeLog(dir, name(1), 1_000, 2 * HOUR, now);
  const next = writeLog(dir, name(2), 1_000, 3 * HOUR, now);
  const over = writeLog(dir, name(3), 1_000, 4 * HOUR, now);
  const small = writeLog(dir, name(4), 100, 5 * HOUR, now); // older than one past the bound: newest first

  const deleted = pruneLogs(dir, RULES, now);

  expect(deleted.map((path) => path.slice(dir.length + 1)).sort()).toEqual([over, small].sort());
  expect(readdirSync(dir).sort()).toEqual([recent, newest, next].sort());
});

it("a pruning finds nothing to do in a folder not made yet", () => {
  expect(pruneLogs(join("/nonexistent", "logs"), RULES)).toEqual([]);
});

it("cuts a log that already held bytes by its size, and keeps one earlier part when told one", async () => {
  const dir = await tempDir();
  const path = join(dir, "watch-2026-01-01T00-00-00-000Z-1.log");
  writeFileSync(path, "a".repeat(90) + "\n");
  const file = new RotatingFile({ path, partBytes: 100, partsKept: 1 }, openSync(path, "a"));
  file.write("b".repeat(19) + "\n"); // 111 bytes: cut
  file.write("c".repeat(99) + "\n"); // 100: cut, the first part deleted
  file.write("d\n");
  // Lines are written asynchronously (pino's own file destination), a part's last ones as it closes.
  const part = logPartPath(path, 1);
  for (let i = 0; i < 200 && (statSync(part).size < 100 || statSync(path).size < 2); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }

  expect(readdirSync(dir).sort()).toEqual([path, part].map((p) => p.slice(dir.length + 1)).sort());
  expect(readFileSync(part, "utf8")).toBe("c".repeat(99) + "\n");
  expect(readFileSync(path, "utf8")).toBe("d\n");
  expect(existsSync(logPartPath(path, 2))).toBe(false);
});

it("cuts a part when the next line comes: a run whose last line fills a part ends with it in the newest part, not an empty one", async () => {
  const dir = await tempDir();
  const path = join(dir, "run-2026-01-01T00-00-00-000Z-1.log");
  const file = new RotatingFile({ path, partBytes: 100, partsKept: 2 }, openSync(path, "a"));
  file.write("a".repeat(59) + "\n");
  file.write("b".repeat(39) + "\n"); // 100 bytes: full, and the run's last line
  for (let i = 0; i < 200 && statSync(path).size < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }

  expect(readdirSync(dir)).toEqual([path.slice(dir.length + 1)]);
  expect(readFileSync(path, "utf8")).toBe("a".repeat(59) + "\n" + "b".repeat(39) + "\n");
});
