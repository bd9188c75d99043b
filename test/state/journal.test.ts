// The journal of submissions in the output folder (OUT/.reel-journal.jsonl) is the second copy of
// what was paid, written before each request leaves: a state file that loses the tasks in flight
// (emptied after a kill -9, or rolled back by a deleted -wal) is refused at the next start, rebuilt
// from the journal with --rebuild-state, and those tasks are followed, never paid for again.
import { readFileSync, truncateSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
const reel = useReelProcesses();

/** A run to its end, in-process (the CLI's own main): the runs killed with kill -9 are real processes. */
const run = (argv: string[], cwd: string, env: Record<string, string>) => runCli(argv, { cwd, env });

/** A manifest of `count` videos of 10 s (1.25 s each on the sandbox below), their texts unique to `name`. */
function manifest(name: string, count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 10\n        text: "${name} take ${i}"\n`,
  ).join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

/** The lines of the journal in `dir`'s output folder (none when there is none). */
function journal(dir: string): string[] {
  try {
    return readFileSync(join(dir, "out", ".reel-journal.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
  } catch {
    return [];
  }
}

async function setUp(files: Record<string, string>) {
  sandbox = await startSandbox({ slots: 8, timeScale: 0.125, preProcessingMs: 5 });
  const dir = await tempDir();
  await writeTree(dir, files);
  const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
  return { dir, env, state: join(dir, ".reel", "state.db") };
}

/**
 * Starts `reel run file --concurrency 4` and waits until its 4 slots hold tasks on the service
 * (`before` made earlier) and their answers were read: no submission is then on the wire, and none
 * can start before a task ends (1.25 s).
 */
async function runUntilFourInFlight(dir: string, env: Record<string, string>, file: string, before = 0) {
  const running = reel(["run", file, "--concurrency", "4"], dir, env);
  await until(() => sandbox!.counters.generationsCreated >= before + 4, "4 tasks in flight");
  await sleep(300);
  expect(sandbox!.counters.generationsCreated).toBe(before + 4);
  expect(sandbox!.counters.unfinished).toBe(4);
  return running;
}

describe("the journal of submissions", () => {
  it("restores the tasks in flight of a state file emptied after a kill -9: refused, rebuilt, each job generated once", async () => {
    const JOBS = 6;
    const { dir, env, state } = await setUp({ "m.yaml": manifest("flight", JOBS) });
    const killed = await runUntilFourInFlight(dir, env, "m.yaml");
    killed.child.kill("SIGKILL");
    await killed.exit;
    const journalLines = journal(dir);

    truncateSync(state, 0);
    const refused = await run(["run", "m.yaml"], dir, env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--rebuild-state");
    expect(sandbox!.counters.generationsCreated).toBe(4);

    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    // Before: no record showed the 4 tasks in flight, and all 6 jobs were paid for again (10).
    expect(sandbox!.counters.generationsCreated).toBe(JOBS);
    expect(sandbox!.counters.duplicateGenerations()).toBe(0);
    expect(journalLines).toHaveLength(8); // 4 intents, 4 answers
    expect(rebuilt.stderr).toMatch(/4 jobs written \(0 done, 4 followed by task id/);
    const results = await readResults<{ status: string; taskId: string }>(dir);
    expect(results.map((r) => r.status)).toEqual(Array(JOBS).fill("Success"));
    expect(new Set(results.map((r) => r.taskId)).size).toBe(JOBS);
    // A run that ends compacts the journal: every job is final and recorded.
    expect(journal(dir)).toEqual([]);
  }, 60_000);

  it("refuses a state file rolled back by a deleted -wal (stopped, then kill -9), rebuilds it: zero duplicates", async () => {
    const { dir, env, state } = await setUp({
      "a.yaml": manifest("earlier", 2),
      "b.yaml": manifest("later", 6),
    });
    const first = await run(["run", "a.yaml"], dir, env);
    expect(first.code, first.stderr).toBe(0);

    const killed = await runUntilFourInFlight(dir, env, "b.yaml", 2);
    // Stopped before its next commit could notice the -wal gone: everything since the last
    // checkpoint (the whole of this run) is lost with the process.
    killed.child.kill("SIGSTOP");
    unlinkSync(`${state}-wal`);
    killed.child.kill("SIGKILL");
    await killed.exit;

    const refused = await run(["run", "b.yaml"], dir, env);
    const code = refused.code;
    // Before: the state (not empty, the first run's) was taken as it was, and 4 tasks paid twice.
    expect(sandbox!.counters.duplicateGenerations()).toBe(0);
    expect(code).toBe(2);
    expect(refused.stderr).toMatch(
      /does not know 4 submissions that .*\.reel-journal\.jsonl shows were sent/,
    );
    expect(refused.stderr).toContain("--rebuild-state");
    expect(refused.stderr).toContain("Nothing was sent");
    expect(sandbox!.counters.generationsCreated).toBe(6);

    const rebuilt = await run(["run", "b.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(sandbox!.counters.duplicateGenerations()).toBe(0);
    expect(sandbox!.counters.generationsCreated).toBe(2 + 6);
    // The first run's videos are listed too, as the folder's: 6 of this run, 2 earlier.
    const results = await readResults<{ manifest: string; status: string; thisRun: boolean }>(dir);
    expect(results.map((r) => [r.manifest, r.status, r.thisRun])).toEqual([
      ...Array(6).fill(["later", "Success", true]),
      ...Array(2).fill(["earlier", "Success", false]),
    ]);
  }, 60_000);
});
