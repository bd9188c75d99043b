// The learned poll schedule in real runs: what a run learns of the service's run times is
// kept in the state file, so the next run, a new process, polls its tasks where they end from its
// first task on; and notices tasks that end early. Real runs of the CLI over HTTP on a sandbox whose
// run times vary, a real state file.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { runCli } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

function manifest(name: string, count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks: [{ duration: 10, text: "${name} ${i}" }]`,
  );
  return [
    "version: 1",
    `name: ${name}`,
    "defaults: { model: actor-2, resolution: 720p }",
    "videos:",
    ...videos,
  ].join("\n");
}

/** Polls per task, and notice delays relative to the run time, of the tasks created after `since` ids. */
function pollFigures(
  s: Sandbox,
  tasks: readonly string[],
): { polls: number; medianDelay: number; worstDelay: number } {
  let polls = 0;
  const delays: number[] = [];
  for (const id of tasks) {
    polls += s.counters.pollsByTask.get(id) ?? 0;
    const t = s.counters.tasks.get(id)!;
    delays.push((t.seenFinalAt! - t.finishedAt!) / (t.finishedAt! - t.startedAt!));
  }
  delays.sort((a, b) => a - b);
  return {
    polls: polls / tasks.length,
    medianDelay: delays[delays.length >> 1]!,
    worstDelay: delays.at(-1)!,
  };
}

describe("the learned poll schedule", () => {
  it("keeps what a run learned in the state file: the next run polls each task a few times from the start", async () => {
    // 10 s of video at 0.1: a second a task, +-30%: long enough that a busy machine's event-loop lag
    // (test files run in parallel) stays small beside it. 6 at a time: each run's 12 in two rounds.
    const s = await sandbox({ timeScale: 0.1, slots: 6, jitter: 0.3, seed: 5 });
    const dir = await tempDir();
    const run = async (name: string): Promise<string[]> => {
      await writeFile(join(dir, `${name}.yaml`), manifest(name, 12));
      const before = new Set(s.counters.tasks.keys());
      const result = await runCli(["run", `${name}.yaml`, "--concurrency", "6"], { cwd: dir, env: env(s) });
      expect(result.code, result.stderr).toBe(0);
      return [...s.counters.tasks.keys()].filter((id) => !before.has(id));
    };
    const first = pollFigures(s, await run("first"));

    const store = StateStore.open(join(dir, ".reel", "state.db"), { readonly: true, baseUrl: s.baseUrl });
    const kept = JSON.parse((await store.readRunTimes())!) as { samples: Record<string, number[]> };
    await store.close();
    expect(kept.samples["actor-2@720p"]!.length).toBe(12);
    // About 100 ms per second of video, as the sandbox runs them (+-30%, and what a poll can tell).
    for (const ms of kept.samples["actor-2@720p"]!) {
      expect(ms).toBeGreaterThan(60);
      expect(ms).toBeLessThan(160);
    }

    const second = pollFigures(s, await run("second"));
    // Informed from its first task: fewer polls than the first run spent learning, half the tasks noticed
    // within 15% of their run time, and none left much later (the margins are for a
    // busy machine, where reel, the sandbox and the test share one event loop).
    expect(second.polls).toBeLessThan(first.polls);
    expect(second.polls).toBeLessThanOrEqual(6);
    expect(second.medianDelay).toBeLessThan(0.15);
    expect(second.worstDelay).toBeLessThan(0.4);
  });
});
