// Two runners on one PostgreSQL store share the account's bound: a job of one finds the bound full,
// waits in its runner's line and claims again, maybe several times. The event stream still says it
// queued once, as docs/events.md describes a job's steps (each note is also a statement on the store).
import { describe, expect, it } from "vitest";
import type { StreamEvent } from "../../src/events/types.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();
const reel = useReelProcesses();

const JOBS = 8;

function manifest(name: string, count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) =>
      `  - id: v${i}\n    source: ./face.png\n    chunks:\n      - duration: 5\n        text: "${name} take ${i}"\n`,
  ).join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-1\n  resolution: 720p\nvideos:\n${videos}`;
}

const env = (s: Sandbox, store: string): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  REEL_STORE: store,
});

describe("a fleet's jobs waiting for a slot of the account", () => {
  it("are said queued once each in the event stream, however often they claim again", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.1 });
    const dir = await tempDir();
    await writeTree(dir, {
      "a.yaml": manifest("a", JOBS / 2),
      "b.yaml": manifest("b", JOBS / 2),
      "face.png": { fixture: "tiny.png" },
    });
    // A manifest each, and a bound of 2 for both: while one runner's two tasks run, the other's
    // jobs find it full.
    const runners = ["a", "b"].map((m) => reel(["run", `${m}.yaml`, "--concurrency", "2"], dir, env(s, url)));
    expect(await Promise.all(runners.map((r) => r.exit))).toEqual([0, 0]);
    expect(s.counters.generationsCreated).toBe(JOBS);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.peakUnfinished).toBe(2);

    const back = await runCli(["events", "--only", "job.queued", "--only", "job.submitting"], {
      cwd: dir,
      env: { REEL_STORE: url },
    });
    expect(back.code, back.stderr).toBe(0);
    const events = back.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as StreamEvent);
    const steps = new Map<string, string[]>();
    for (const e of events) steps.set(e.job!, [...(steps.get(e.job!) ?? []), e.type]);
    expect(steps.size).toBe(JOBS);
    // (The note of the wait may be stored after the claim's own event: counted, not ordered.)
    for (const [job, list] of steps) expect(list.sort(), job).toEqual(["job.queued", "job.submitting"]);
  });
});
