// The logs beside the state file stay bounded over a weeks-long watch: a reel's log is cut into
// parts by size (a few kept), and a run or watch deletes at its start the logs of earlier reels past
// 30 days or the newest 100, never one of a reel still running. The real binary writes them, as a
// user's reel does; a small part size (REEL_LOG_PART_BYTES) makes a short run cut its log.
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { expect, it } from "vitest";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const reel = useReelProcesses();

const PART_BYTES = 3_000;
const PARTS_KEPT = 3;

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: logs\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

async function project(jobs: number): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": manifest(jobs) });
  return dir;
}

interface LogLine {
  time: number;
  pid: number;
}

/** Every line of a log, each a whole JSON object (a torn line fails here). */
function linesOf(path: string): LogLine[] {
  const text = readFileSync(path, "utf8");
  if (text === "") return []; // a part just begun
  expect(text.endsWith("\n"), `${basename(path)} ends with a whole line: ${text.slice(-200)}`).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as LogLine);
}

/** A run's log and its earlier parts, oldest first (`.3.log`, `.2.log`, `.1.log`, then the log). */
function partsOf(logs: string, log: string): string[] {
  const stem = log.slice(0, -".log".length);
  const parts = readdirSync(logs)
    .filter((name) => name.startsWith(`${stem}.`) && name !== log)
    .sort((a, b) => Number(b.split(".").at(-2)) - Number(a.split(".").at(-2)));
  return [...parts, log].map((name) => join(logs, name));
}

/** The lines of consecutive parts are in time order: nothing of one part written after the next. */
function expectInOrder(parts: string[]): void {
  const times = parts.flatMap((part) => linesOf(part).map((line) => line.time));
  expect(times).toEqual([...times].sort((a, b) => a - b));
}

it("cuts a run's log into parts past REEL_LOG_PART_BYTES: the newest under the name it printed, at most 3 earlier parts, each whole", async () => {
  const dir = await project(24);
  const run = reel(["run", "m.yaml", "--sandbox"], dir, { REEL_LOG_PART_BYTES: String(PART_BYTES) });
  expect(await run.exit, run.stderr()).toBe(0);

  const printed = /^Log: (.+\.log)$/m.exec(run.stderr())?.[1];
  expect(printed).toBeDefined();
  const logs = join(dir, ".reel", "logs");
  const log = basename(printed!);
  const parts = partsOf(logs, log);
  // More than 4 parts' worth was written: the oldest went, 3 earlier parts and the newest are left.
  expect(readdirSync(logs).sort()).toEqual(parts.map((part) => basename(part)).sort());
  expect(parts.map((part) => basename(part))).toEqual(
    [3, 2, 1].map((n) => log.replace(/\.log$/, `.${n}.log`)).concat(log),
  );
  // An earlier part was cut at the first line past the size: it holds the size, and less than a line more.
  for (const part of parts.slice(0, -1)) {
    const size = statSync(part).size;
    expect(size).toBeGreaterThanOrEqual(PART_BYTES);
    expect(size).toBeLessThan(PART_BYTES + 1_000);
  }
  expect(statSync(parts.at(-1)!).size).toBeLessThan(PART_BYTES + 1_000);
  expectInOrder(parts);
  // The run's last lines are in the newest part, under the name it printed (with its pid).
  expect(linesOf(parts.at(-1)!).length).toBeGreaterThan(0);
  expect(log).toMatch(new RegExp(`^run-.+Z-${run.child.pid}\\.log$`));
}, 30_000);

it("a log cut into parts is intact after kill -9: whole lines, in order, the parts cut before the last one full", async () => {
  const dir = await project(60);
  const run = reel(["run", "m.yaml", "--sandbox", "--time-scale", "0.05"], dir, {
    REEL_LOG_PART_BYTES: String(PART_BYTES),
  });
  const logs = join(dir, ".reel", "logs");
  const cutThrice = (): boolean =>
    existsSync(logs) && readdirSync(logs).some((name) => name.endsWith(".3.log"));
  await until(() => cutThrice() || run.child.exitCode !== null, "the log cut three times");
  expect(run.child.exitCode, "the run was still running when killed").toBeNull();
  run.child.kill("SIGKILL");
  expect(await run.exit).toBeNull();

  const log = readdirSync(logs).find((name) => /^run-.+Z-\d+\.log$/.test(name))!;
  const parts = partsOf(logs, log);
  expect(parts.length).toBe(PARTS_KEPT + 1);
  for (const part of parts) {
    for (const line of linesOf(part)) expect(line.pid).toBe(run.child.pid);
  }
  expectInOrder(parts);
  // The part cut two cuts before the kill had the time to be written whole (a part's last lines are
  // written after its cut, as any line, within milliseconds): none of its lines was lost at the cut.
  expect(statSync(parts[0]!).size).toBeGreaterThanOrEqual(PART_BYTES);
}, 30_000);

it("a run deletes the logs of earlier runs past 30 days or the newest 100, never one of a reel still running nor a file not its own", async () => {
  const dir = await project(1);
  // A state file of earlier runs (without one, their logs would show it lost, and the run refused).
  expect(await reel(["run", "m.yaml", "--sandbox"], dir, {}).exit).toBe(0);
  const logs = join(dir, ".reel", "logs");
  await mkdir(logs, { recursive: true });
  const DAY = 24 * 3_600_000;
  const now = Date.now();
  const GONE_PID = 99_999_999; // above any pid_max: no process has it
  const make = (name: string, ageMs: number): string => {
    const path = join(logs, name);
    writeFileSync(path, '{"msg":"x"}\n');
    const at = new Date(now - ageMs);
    utimesSync(path, at, at);
    return name;
  };
  const stamp = (ms: number): string => new Date(ms).toISOString().replace(/[:.]/g, "-");
  const old = [
    make(`run-${stamp(now - 40 * DAY)}-${GONE_PID}.log`, 40 * DAY),
    make(`watch-${stamp(now - 41 * DAY)}-${GONE_PID}.2.log`, 41 * DAY),
    make(`run-${stamp(now - 45 * DAY)}.log`, 45 * DAY), // named before the pid was in the name
  ];
  // 105 recent logs of finished runs, a minute apart: the 5 oldest are past the newest 100.
  const recent = Array.from({ length: 105 }, (_, i) =>
    make(`run-${stamp(now - 2 * DAY - i * 60_000)}-${GONE_PID}.log`, 2 * DAY + i * 60_000),
  );
  const kept = [
    // A reel still running (this test's process) whose log was last written long ago: an idle watch.
    make(`watch-${stamp(now - 60 * DAY)}-${process.pid}.log`, 60 * DAY),
    make(`watch-${stamp(now - 60 * DAY)}-${process.pid}.1.log`, 60 * DAY),
    make("notes.log", 90 * DAY),
    make("run-by-hand.txt", 90 * DAY),
  ];

  const run = reel(["run", "m.yaml", "--sandbox"], dir, {});
  expect(await run.exit, run.stderr()).toBe(0);

  const left = new Set(readdirSync(logs));
  for (const name of old) expect(left.has(name), name).toBe(false);
  expect(recent.filter((name) => left.has(name))).toEqual(recent.slice(0, 100));
  for (const name of kept) expect(left.has(name), name).toBe(true);
  // And the two runs' own logs: this one's, and the first one's, written within the hour (in use,
  // for all a reel can tell of a log another machine may write), neither counted among the 100.
  expect([...left].filter((name) => /^run-.+Z-\d+\.log$/.test(name) && !recent.includes(name))).toHaveLength(
    2,
  );
  expect(left.size).toBe(100 + kept.length + 2);
}, 30_000);

it("refuses a REEL_LOG_PART_BYTES that is not a size, before anything is opened", async () => {
  const dir = await project(1);
  const result = await runCli(["run", "m.yaml", "--sandbox"], {
    cwd: dir,
    env: { REEL_LOG_PART_BYTES: "64M" },
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("expected REEL_LOG_PART_BYTES to be a whole number from 1 up, got '64M'");
  expect(existsSync(join(dir, ".reel"))).toBe(false);
});
