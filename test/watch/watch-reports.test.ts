// How often `reel watch` rewrites results.jsonl and index.html while results pour in: at most once
// every few seconds, and the last state always written (once the watch is idle, and when it stops).
// A real watch on the sandbox; each rewrite is a new file renamed into place, seen here by its inode
// and modification time.
import { existsSync } from "node:fs";
import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPORT_GAP_MS } from "../../src/report/report-throttle.js";
import { useCommands, until, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const startCommand = useCommands();

const VIDEOS = 160;

const manifest = `version: 1
name: burst
defaults:
  model: actor-2
  resolution: 720p
videos:
${Array.from({ length: VIDEOS }, (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 10\n        text: "take ${i}"\n`).join("")}`;

/** Which version of a file is there: a rewrite renames a new file into place. */
async function version(file: string): Promise<string | undefined> {
  try {
    const info = await stat(file, { bigint: true });
    return `${info.ino}:${info.mtimeNs}`;
  } catch {
    return undefined;
  }
}

describe("reel watch's reports", () => {
  it("are rewritten at most once every few seconds while results pour in, and hold every result at the end", async () => {
    // 160 videos of 10 s at 0.02 x: 0.2 s each, 8 at a time: a result every 25 ms or so for seconds.
    const s = await sandbox({ slots: 8, timeScale: 0.02 });
    const dir = await tempDir();
    await mkdir(join(dir, "incoming"));
    const watch = startCommand(["watch", "incoming", "--settle", "200ms", "--concurrency", "8"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    await until(() => watch.output().stderr.includes("watching"), "the watcher to be ready");
    const results = join(dir, "out", "results.jsonl");
    await writeTree(dir, { "incoming/burst.yaml": manifest });

    // Every rewrite seen, with when, until the file says every video is done.
    const rewrites: number[] = [];
    let seen: string | undefined;
    const allDone = async () => {
      const lines = await readResults<{ status: string }>(dir);
      return lines.length === VIDEOS && lines.every((line) => line.status === "Success");
    };
    await until(
      async () => {
        const now = await version(results);
        if (now === undefined || now === seen) return false;
        seen = now;
        rewrites.push(performance.now());
        return allDone();
      },
      "results.jsonl to hold every video done, the watch still running",
      60_000,
    );
    expect(s.counters.generationsCreated).toBe(VIDEOS);
    // Results came for seconds: rewrites were made while they did, each a few seconds after the last
    // (a little less allowed for when this loop saw them).
    expect(rewrites.length).toBeGreaterThanOrEqual(2);
    const gaps = rewrites.slice(1).map((at, i) => at - rewrites[i]!);
    expect(Math.min(...gaps)).toBeGreaterThan(REPORT_GAP_MS - 500);

    const stopped = await watch.stop();
    expect(stopped.code, stopped.stderr).toBe(0);
    const final = await readResults<{ id: string; status: string; thisRun: boolean }>(dir);
    expect(final.map((line) => line.id).sort()).toEqual(
      Array.from({ length: VIDEOS }, (_, i) => `v${i}`).sort(),
    );
    expect(final.every((line) => line.status === "Success" && line.thisRun)).toBe(true);
    const page = await readFile(join(dir, "out", "index.html"), "utf8");
    expect(page).toContain("The watch has stopped");
    expect(page).not.toContain("data-refresh=");
    expect(existsSync(join(dir, "out", "burst", `v${VIDEOS - 1}.mp4`))).toBe(true);
  }, 90_000);
});
