// Two runners on one state file, however they reach it: the lock is the kernel's (flock on the file
// itself), and each costed intent is a compare-and-set on its row, so that even a second writer the
// lock did not stop (an older reel, a lock bypassed) cannot make one job, speech or upload paid twice.
// The compare-and-set of each intent, store by store, is in conformance.ts.
import { spawnSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
const reel = useReelProcesses();

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 10\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: two\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

/** Whether `unshare --pid --fork --mount-proc` works here (root, or user namespaces allowed). */
const canUnshare =
  process.platform === "linux" &&
  spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" }).status === 0;

describe("one runner per state file", () => {
  // Two paths to one file (hard links) and two PID namespaces (two containers on one volume): the
  // earlier lock, a pid file keyed by path and judged by kill(pid, 0), let both in, and both paid
  // for every job (30 jobs -> 60 generations).
  it.each([
    ["a hard link of the state file", false],
    ["another PID namespace (unshare --pid)", true],
  ] as const)(
    "a second reel reaching the state through %s is refused; each job is paid once",
    async (_, pidNs) => {
      if (pidNs && !canUnshare) {
        console.warn("skipped: `unshare --pid --fork --mount-proc` is not available to this user");
        return;
      }
      const JOBS = 30;
      sandbox = await startSandbox({ slots: 4, timeScale: 0.05, preProcessingMs: 10 });
      const dir = await tempDir();
      await writeTree(dir, { "m.yaml": manifest(JOBS) });
      const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
      mkdirSync(join(dir, "a"));
      mkdirSync(join(dir, "b"));
      const first = reel(["run", "m.yaml", "--state", "a/state.db"], dir, env);
      await until(() => sandbox!.counters.generationsCreated >= 2, "the first run submitting");
      let statePath = "a/state.db";
      if (!pidNs) {
        linkSync(join(dir, "a", "state.db"), join(dir, "b", "state.db"));
        statePath = "b/state.db";
      }
      const second = reel(
        ["run", "m.yaml", "--state", statePath],
        dir,
        env,
        pidNs ? ["unshare", "--pid", "--fork", "--mount-proc"] : [],
      );
      const [secondCode, firstCode] = await Promise.all([second.exit, first.exit]);
      // What the service was paid for, first: the earlier lock let the second in, and it paid again.
      expect(sandbox.counters.generationsCreated).toBe(JOBS);
      expect(sandbox.counters.duplicateGenerations()).toBe(0);
      expect(secondCode, second.stderr()).toBe(2);
      expect(second.stderr()).toMatch(
        /another reel process \(pid \d+(, from its lock file)?\) is using the state file/,
      );
      expect(firstCode, first.stderr()).toBe(0);
    },
    60_000,
  );

  // Review of the fix above: the lock follows the file, but SQLite names its -wal after the path.
  // A run killed through one name left its latest records in a-wal; a run through the other name
  // read the file without them, and paid again for every job in flight (30 jobs -> 60).
  it("refuses a state file with two names (hard links), after a run through the other was killed", async () => {
    sandbox = await startSandbox({ slots: 4, timeScale: 0.05, preProcessingMs: 10 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest(12) });
    const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    const first = reel(["run", "m.yaml", "--state", "a/state.db"], dir, env);
    await until(() => sandbox!.counters.generationsCreated >= 2, "the first run submitting");
    linkSync(join(dir, "a", "state.db"), join(dir, "b", "state.db"));
    first.child.kill("SIGKILL");
    await first.exit;
    const paid = sandbox.counters.generationsCreated;
    const second = reel(["run", "m.yaml", "--state", "b/state.db"], dir, env);
    expect(await second.exit).toBe(2);
    expect(second.stderr()).toContain("has 2 names (hard links)");
    expect(sandbox.counters.generationsCreated).toBe(paid);
  }, 60_000);

  it("lets plan and status read the state while a run holds it", async () => {
    sandbox = await startSandbox({ slots: 2, timeScale: 0.05, preProcessingMs: 10 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest(8) });
    const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
    const run = reel(["run", "m.yaml"], dir, env);
    await until(() => sandbox!.counters.generationsCreated >= 1, "the run submitting");
    for (const args of [["status"], ["plan", "m.yaml"]]) {
      const read = reel(args, dir, env);
      expect(await read.exit, read.stderr()).toBe(0);
    }
    expect(await run.exit, run.stderr()).toBe(0);
  }, 60_000);
});

describe("costed intents are compare-and-set", () => {
  /** A second writer of the same file that no lock stops, as a reel that the lock did not see would be. */
  function otherWriter(path: string): Database.Database {
    const db = new Database(path);
    db.pragma("busy_timeout = 5000");
    return db;
  }

  it("does not send a job whose row another process claimed while this run prepared it", async () => {
    // The asset upload is slow: the job waits in it, and meanwhile the row is claimed from outside.
    sandbox = await startSandbox({
      timeScale: 0.01,
      preProcessingMs: 5,
      faults: { latencyMs: 800, routes: ["POST /v1/assets"] },
    });
    const dir = await tempDir();
    await writeTree(dir, {
      "m.yaml": `version: 1\nname: m\nvideos:\n  - id: a\n    model: actor-2\n    resolution: 720p\n    source: ./face.png\n    chunks:\n      - duration: 5\n        text: "hi"\n`,
      "face.png": { fixture: "tiny.png" },
    });
    const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
    const run = reel(["run", "m.yaml"], dir, env);
    const statePath = join(dir, ".reel", "state.db");
    await until(() => existsSync(statePath), "the state file");
    const other = otherWriter(statePath);
    // The file exists before its tables do: until then, the query fails and is asked again.
    const recorded = (): boolean => {
      try {
        return other.prepare("SELECT count(*) AS n FROM jobs").pluck().get() === 1;
      } catch {
        return false;
      }
    };
    await until(recorded, "the job recorded");
    other.prepare("UPDATE jobs SET state = 'submitted', task_id = '4242', task_status = 'Running'").run();
    other.close();
    expect(await run.exit).toBe(1); // its one job is not done
    const stderr = run.stderr();
    expect(sandbox.counters.requestCount("POST", "/v1/assets")).toBe(1); // it was waiting on the upload
    expect(sandbox.counters.generationsCreated).toBe(0);
    expect(stderr).toMatch(
      /not submitted: the state file shows this job Running \(task 4242\), changed by another process/,
    );
  }, 30_000);
});
