// --poll-deadline: a task that runs past it is reported with its task id kept, and the next run
// follows the same task to the end instead of paying for a new one.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

const SLOW = `version: 1
name: slow
videos:
  - id: long
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a very slow render"
`;

it("stops following a task past --poll-deadline, keeps its id, and the rerun follows it to the end", async () => {
  // 5 s of video at 0.5 s per second: the task runs about 2.5 s, well past a 1 s deadline.
  const s = await sandbox({ timeScale: 0.5 });
  const dir = await tempDir();
  await writeTree(dir, { "slow.yaml": SLOW });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };

  const first = await runCli(["run", "slow.yaml", "--poll-deadline", "1s"], { cwd: dir, env });
  expect(first.code).toBe(1);
  const [cut] = await readResults(dir);
  expect(cut?.status).not.toBe("Success");
  expect(cut?.file).toBeNull();
  expect(cut?.taskId).toEqual(expect.any(String));
  expect(first.stderr).toContain(`after 1 s (--poll-deadline); task ${String(cut?.taskId)} is kept`);
  // Not "completed": a script reading run --json must not take unfinished work for finished.
  expect(first.stderr).toMatch(/^reel run: incomplete\. /m);
  expect(first.stderr).toContain("rerun the same command to go on");

  const second = await runCli(["run", "slow.yaml"], { cwd: dir, env });
  expect(second.code).toBe(0);
  const [done] = await readResults(dir);
  expect(done).toMatchObject({ status: "Success", taskId: cut?.taskId, attempts: 1, error: null });
  expect((await stat(join(dir, "out", "slow", "long.mp4"))).size).toBeGreaterThan(0);
  expect(s.counters.generationsCreated).toBe(1);
});

it("refuses a --poll-deadline that is not a duration, naming the forms it takes, and sends nothing", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, { "slow.yaml": SLOW });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const result = await runCli(["run", "slow.yaml", "--poll-deadline", "90"], { cwd: dir, env });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(
    "expected --poll-deadline to be a duration such as 90s, 30m, 6h or 2d, got '90'",
  );
  expect(s.counters.requests.size).toBe(0);
});
