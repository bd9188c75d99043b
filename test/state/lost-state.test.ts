// A state file lost under reel (emptied, deleted, its WAL deleted) is never taken for a new one: the
// records in OUT and the logs beside the state show that work was paid for. reel refuses (exit 2,
// nothing sent), rebuilds the state from the records with --rebuild-state (nothing paid again), and
// stops a run whose WAL vanishes before its next costed call. Runs that end by themselves run
// in-process (the CLI's own main); the run killed with kill -9 is a real process.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
const reel = useReelProcesses();

/** A run to its end, in-process: its exit code and what it said on stderr. */
const run = (argv: string[], cwd: string, env: Record<string, string>) => runCli(argv, { cwd, env });

function manifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) =>
      `  - id: v${i}\n    chunks:\n      - duration: ${i % 2 === 0 ? 10 : 5}\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: lost\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

async function setUp(jobs: number, sandboxOptions = {}) {
  sandbox = await startSandbox({ slots: 8, timeScale: 0.01, preProcessingMs: 5, ...sandboxOptions });
  const dir = await tempDir();
  await writeTree(dir, { "m.yaml": manifest(jobs) });
  const env = { REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey };
  return { dir, env, state: join(dir, ".reel", "state.db") };
}

describe("a lost state file", () => {
  it("refuses an emptied state file beside the records, then rebuilds it from them: nothing paid again", async () => {
    const JOBS = 30;
    const { dir, env, state } = await setUp(JOBS);
    const first = await run(["run", "m.yaml", "--concurrency", "8"], dir, env);
    expect(first.code, first.stderr).toBe(0);
    expect(sandbox!.counters.generationsCreated).toBe(JOBS);
    const video = join(dir, "out", "lost", "v0.mp4");
    const before = statSync(video);

    truncateSync(state, 0);
    const refused = await run(["run", "m.yaml"], dir, env);
    // Before: taken for a new state file, all 30 jobs paid again and their videos overwritten.
    expect(sandbox!.counters.generationsCreated).toBe(JOBS);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the state file ${state} is empty`);
    expect(refused.stderr).toMatch(/30 job records in .*out/);
    expect(refused.stderr).toContain("--rebuild-state");
    expect(refused.stderr).toContain("Nothing was sent");
    // Refused again, not taken for new the second time either.
    expect((await run(["run", "m.yaml"], dir, env)).code).toBe(2);

    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toMatch(/state rebuilt from the records .*: 30 jobs written \(30 done/);
    expect(sandbox!.counters.generationsCreated).toBe(JOBS);
    // The videos were not overwritten by new takes.
    expect(statSync(video).ino).toBe(before.ino);
    expect(statSync(video).mtimeMs).toBe(before.mtimeMs);
    const results = await readResults<{ status: string; taskId: string }>(dir);
    expect(results.map((r) => r.status)).toEqual(Array(JOBS).fill("Success"));
  }, 60_000);

  it("rebuilt, lists again in the folder's reports the manifests whose records are in it", async () => {
    const { dir, env, state } = await setUp(2);
    await writeTree(dir, { "other.yaml": manifest(1).replace("name: lost", "name: other") });
    expect((await run(["run", "other.yaml"], dir, env)).code).toBe(0);
    expect((await run(["run", "m.yaml"], dir, env)).code).toBe(0);
    truncateSync(state, 0);
    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const results = await readResults<{ manifest: string; id: string; thisRun: boolean }>(dir);
    expect(results.map((r) => [`${r.manifest}/${r.id}`, r.thisRun])).toEqual([
      ["lost/v0", true],
      ["lost/v1", true],
      ["other/v0", false],
    ]);
    expect(sandbox!.counters.generationsCreated).toBe(3);
  });

  // Review: records are files anyone can edit. One whose `file` said ../victim.txt had that file
  // moved into OUT as an old version of the video, and one whose manifest said ../.. aimed outside.
  it("trusts no path from a record: a file outside OUT stays where it is, a hostile name is skipped", async () => {
    const { dir, env, state } = await setUp(2);
    expect((await run(["run", "m.yaml"], dir, env)).code).toBe(0);
    await writeFile(join(dir, "victim.txt"), "keep me\n");
    const recordPath = join(dir, "out", "lost", "v0.json");
    const record = JSON.parse(await readFile(recordPath, "utf8")) as Record<string, unknown>;
    await writeFile(recordPath, `${JSON.stringify({ ...record, file: "../victim.txt" })}\n`);
    const hostile = join(dir, "out", "lost", "v1.json");
    const other = JSON.parse(await readFile(hostile, "utf8")) as Record<string, unknown>;
    await writeFile(hostile, `${JSON.stringify({ ...other, manifest: "../..", id: "x" })}\n`);
    truncateSync(state, 0);

    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(await readFile(join(dir, "victim.txt"), "utf8")).toBe("keep me\n");
    expect(readdirSync(join(dir, "out", "lost")).filter((f) => f.endsWith(".txt"))).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual([".reel", "m.yaml", "out", "victim.txt"]);
  }, 60_000);

  // Review: the state folder deleted whole (logs and all) after a completed run (the journal then
  // empty) was taken for new: every job paid again, its record and video overwritten.
  it("refuses to pay again for jobs whose records in OUT show them sent, when the state folder is gone or another", async () => {
    const { dir, env } = await setUp(5);
    expect((await run(["run", "m.yaml"], dir, env)).code).toBe(0);
    const video = join(dir, "out", "lost", "v0.mp4");
    const before = statSync(video);
    rmSync(join(dir, ".reel"), { recursive: true, force: true });

    for (const args of [
      ["run", "m.yaml"],
      ["run", "m.yaml", "--state", "other/state.db"],
    ]) {
      const again = await run(args, dir, env);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(
        /5 jobs of these manifests have records in .* showing they were sent already/,
      );
      expect(again.stderr).toContain("--rebuild-state");
    }
    expect(sandbox!.counters.generationsCreated).toBe(5);
    expect(statSync(video).ino).toBe(before.ino);

    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(sandbox!.counters.generationsCreated).toBe(5);
  }, 60_000);

  it("refuses a deleted state file beside the logs of its runs; a new state file in a new folder, with its own OUT, starts", async () => {
    const { dir, env, state } = await setUp(3);
    expect((await run(["run", "m.yaml"], dir, env)).code).toBe(0);
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${state}${suffix}`, { force: true });
    const refused = await run(["run", "m.yaml"], dir, env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is missing, but the log of 1 earlier run in/);
    expect(sandbox!.counters.generationsCreated).toBe(3);
    // Another state file of its own folder, with an output folder of its own: new, and runs (the
    // user's choice to pay). Sharing OUT, it would meet the records of the jobs paid already (see
    // "refuses to pay again for jobs whose records in OUT show them sent").
    const other = await run(
      ["run", "m.yaml", "--state", ".staging/state.db", "--out", "out-staging"],
      dir,
      env,
    );
    expect(other.code, other.stderr).toBe(0);
    expect(sandbox!.counters.generationsCreated).toBe(6);
  }, 60_000);

  it("a video cut short is not adopted by the rebuilt state: checked against its record's size and hash, fetched again from its task", async () => {
    const { dir, env } = await setUp(2);
    expect((await run(["run", "m.yaml"], dir, env)).code).toBe(0);
    const video = join(dir, "out", "lost", "v1.mp4");
    const record = JSON.parse(await readFile(join(dir, "out", "lost", "v1.json"), "utf8")) as {
      size: number;
      sha256: string;
    };
    expect(record.size).toBe(statSync(video).size);
    truncateSync(video, 100); // its first bytes, "ftyp" and all, are still there
    rmSync(join(dir, ".reel"), { recursive: true });

    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toContain("v1.mp4 is not the video reel saved");
    await expectServedVideo(video);
    await expectServedVideo(join(dir, "out", "lost", "v0.mp4"));
    expect(sandbox!.counters.generationsCreated).toBe(2);
    // The cut file is kept aside, never written over.
    const kept = readdirSync(join(dir, "out", "lost")).filter((f) => /^v1\.[0-9a-f]{8}\.mp4$/.test(f));
    expect(kept.map((f) => statSync(join(dir, "out", "lost", f)).size)).toEqual([100]);

    const again = await run(["run", "m.yaml"], dir, env);
    expect(again.code, again.stderr).toBe(0);
    await expectServedVideo(video);
    expect(sandbox!.counters.generationsCreated).toBe(2);
  }, 60_000);

  it("rebuilds jobs in flight and intents with no answer from their records: followed or uncertain, never resent", async () => {
    const { dir, env } = await setUp(2);
    await writeTree(dir, {
      // As a run left them: v0's task was running (results.jsonl), v1 was sent with no answer.
      "out/results.jsonl": "",
    });
    const first = await run(["run", "m.yaml"], dir, env);
    expect(first.code).toBe(0);
    const results = await readResults<Record<string, unknown>>(dir);
    const v0 = results.find((r) => r.id === "v0")!;
    const v1 = results.find((r) => r.id === "v1")!;
    const taskOfV0 = v0.taskId as string;
    await writeTree(dir, {
      "out/results.jsonl": `${JSON.stringify({ ...v0, status: "Running", file: null })}\n${JSON.stringify({ ...v1, status: "submitting", taskId: null, file: null })}\n`,
    });
    rmSync(join(dir, "out", "lost"), { recursive: true });
    rmSync(join(dir, ".reel"), { recursive: true });
    const rebuilt = await run(["run", "m.yaml", "--rebuild-state"], dir, env);
    expect(rebuilt.code).toBe(1); // v1 is uncertain
    expect(sandbox!.counters.generationsCreated).toBe(2);
    const after = await readResults<{ id: string; status: string; taskId: string | null }>(dir);
    expect(after.find((r) => r.id === "v0")).toMatchObject({ status: "Success", taskId: taskOfV0 });
    expect(after.find((r) => r.id === "v1")).toMatchObject({ status: "uncertain" });
    expect(existsSync(join(dir, "out", "lost", "v0.mp4"))).toBe(true);
  }, 60_000);
});

describe("a WAL deleted while reel runs", () => {
  it("stops the run before its next costed call, keeps what it recorded, and a rerun after kill -9 pays nothing twice", async () => {
    // Enough that the run notices (at its next commit, a few submissions on) long before its end.
    const JOBS = 20;
    const { dir, env, state } = await setUp(JOBS, { slots: 4, timeScale: 0.05 });
    const killed = reel(["run", "m.yaml", "--concurrency", "4"], dir, env);
    await until(() => sandbox!.counters.generationsCreated >= 6, "some submissions");
    unlinkSync(`${state}-wal`);
    // Give it a moment to notice at its next commit, then kill it as a crash would.
    await until(
      () => killed.stderr().includes("write-ahead log") || killed.child.exitCode !== null,
      "the run to notice",
      10_000,
    ).catch(() => {});
    const createdAtStop = sandbox!.counters.generationsCreated;
    killed.child.kill("SIGKILL");
    await killed.exit;
    expect(killed.stderr()).toMatch(/write-ahead log .*state\.db-wal was deleted while reel was running/);
    // Nothing more was paid for after it noticed.
    expect(sandbox!.counters.generationsCreated).toBe(createdAtStop);
    expect(createdAtStop).toBeLessThan(JOBS);

    const rerun = reel(["run", "m.yaml", "--concurrency", "4"], dir, env);
    const code = await rerun.exit;
    expect(sandbox!.counters.duplicateGenerations()).toBe(0);
    const lines = readFileSync(join(dir, "out", "results.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(JOBS);
    // A claim the killed run had committed, its request perhaps never sent, is uncertain (exit 1)
    // and not sent again; every other job was generated once.
    const uncertain = lines.filter((line) => (JSON.parse(line) as { status: string }).status === "uncertain");
    expect(code).toBe(uncertain.length > 0 ? 1 : 0);
    expect(sandbox!.counters.generationsCreated).toBeGreaterThanOrEqual(JOBS - uncertain.length);
    expect(sandbox!.counters.generationsCreated).toBeLessThanOrEqual(JOBS);
  }, 90_000);
});
