// The live display of a fleet's runner, as a user sees it: the real binary in an 80-column
// pseudo-terminal, another runner beside it (a real process) on one PostgreSQL store and one
// account. The display says what the fleet does (its runners, its generations in flight against
// the account's bound, the run's videos made by any runner), why it waits when the bound is full,
// with the numbers, in a line that fits; and its counts add up to the run's videos: the other
// runner's videos are theirs, and a rerun of the finished campaign made none.
import { describe, expect, it } from "vitest";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { usePty } from "../helpers/pty.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();
const reel = useReelProcesses();
const reelInPty = usePty();

const JOBS = 27;
const manifest = `version: 1\nname: camp\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${Array.from(
  { length: JOBS },
  (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "video ${i}"\n`,
).join("")}`;

/** This run's counts on the screen: "12 done", "15 by other runners", "27 done before". */
function count(screen: string, what: string): number {
  const run = screen.slice(screen.indexOf("this run:")).split("reel run:")[0]!.replace(/\s+/g, " ");
  const found = new RegExp(`(\\d+) ${what}\\b`).exec(run);
  return found ? Number(found[1]) : 0;
}

describe("the live display of a fleet's runner", () => {
  it("says what the fleet does and why it waits, in lines that fit 80 columns; the counts add up, also on a rerun", async (context) => {
    const url = await database(context);
    // A task of 5 s of video runs 0.75 s: 27 jobs on a bound of 4 last several seconds.
    const s = await sandbox({ timeScale: 0.15, slots: 8 });
    const dir = await tempDir();
    await writeTree(dir, { "camp.yaml": manifest });
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, REEL_STORE: url };
    const args = ["run", "camp.yaml", "--concurrency", "4"];
    const other = reel(args, dir, env);
    // The runner on the terminal starts once the other holds the whole bound, so that it waits for a
    // slot (a runner takes its own freed slots again while it has jobs waiting): which of two starting
    // together gets there first is up to the machine.
    await until(() => s.counters.unfinished >= 4, "the other runner holding the bound");
    const tty = reelInPty(args, dir, env);

    let screen = "";
    await until(
      async () => {
        screen = await tty.screen();
        return /waiting: the account's bound is full across the fleet \(4 of 4, 2 runners\)/.test(screen);
      },
      "the fleet's bound said full, with its numbers",
      15_000,
    );
    expect(screen).toMatch(/^fleet: {2}2 runners · in flight 4 of 4, \d here · done \d+\/27, \d+ here$/m);
    for (const line of screen.split("\n")) expect(line.length).toBeLessThan(80);
    expect(await tty.wrapped()).toEqual([]);
    // reel status says the same of the fleet at any moment, in text and in JSON.
    const status = await runCli(["status", "--store", url], { cwd: dir, env: {} });
    expect(status.stdout).toMatch(
      new RegExp(
        `^Fleet of ${s.baseUrl.replace(/[.]/g, "\\.")}: 2 runners · in flight \\d of 4 · done \\d+$`,
        "m",
      ),
    );
    const json = JSON.parse(
      (await runCli(["status", "--store", url, "--json"], { cwd: dir, env: {} })).stdout,
    );
    expect(json.fleet[s.baseUrl]).toMatchObject({ runners: 2, bound: 4 });

    expect(await other.exit, other.stderr()).toBe(0);
    expect(await tty.exit).toBe(0);
    const end = await tty.screen();
    expect(end).toMatch(/^█{40} {2}27\/27 videos$/m);
    const made = count(end, "done");
    expect(made).toBeGreaterThan(0);
    // Made here, by the other runner while this one ran, or before it started: each counted once.
    expect(made + count(end, "by other runners") + count(end, "done before")).toBe(JOBS);
    expect(s.counters.generationsCreated).toBe(JOBS);
    // Once both stopped: no runner at work, so no fleet line.
    expect((await runCli(["status", "--store", url], { cwd: dir, env: {} })).stdout).not.toContain(
      "Fleet of",
    );

    // The finished campaign again: nothing made by this run, nor by another.
    const again = reelInPty(args, dir, env);
    expect(await again.exit).toBe(0);
    const rerun = await again.screen();
    expect(rerun).toMatch(/27\/27 videos/);
    expect(count(rerun, "done before")).toBe(JOBS);
    expect(count(rerun, "done")).toBe(0);
    expect(count(rerun, "by other runners")).toBe(0);
    expect(s.counters.generationsCreated).toBe(JOBS);
  }, 40_000);
});
