// The live display as a user sees it: the real binary in a real pseudo-terminal of 80 columns, its
// output read back through a headless terminal emulator. During a run: the bar, a job named with
// where it is, and why reel waits (one slot, several jobs); at its end the bar stays, full. During a
// watch: the display appears (its sink was once never started), failures are printed above it, and
// a line says when a manifest's jobs are all final.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { until, writeTree } from "../helpers/cli.js";
import { usePty } from "../helpers/pty.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reelInPty = usePty();

function manifest(name: string, ids: string[], extra = ""): string {
  const videos = ids
    .map(
      (id) => `  - id: ${id}\n    chunks:\n      - duration: 5\n        text: "${id} of ${name}"${extra}\n`,
    )
    .join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

const SCREEN_MS = 8_000;

describe("the live display in an 80-column terminal", () => {
  it("run: shows the bar, a job in flight by name, and why the others wait; the full bar stays at the end", async () => {
    // 5 s of video run 0.6 s: three jobs one at a time last about 2 s.
    const s = await sandbox({ timeScale: 0.12, slots: 4 });
    const dir = await tempDir();
    await writeTree(dir, { "spring.yaml": manifest("spring", ["intro", "middle", "outro"]) });
    const reel = reelInPty(["run", "--concurrency", "1", "spring.yaml"], dir, {
      REEL_BASE_URL: s.baseUrl,
      REEL_API_KEY: s.apiKey,
    });
    let screen = "";
    await until(
      async () => {
        screen = await reel.screen();
        return /spring\/\w+ +(submitted|Running)/.test(screen) && screen.includes("for a slot, 1 of 1");
      },
      "a job in flight and the others waiting for the slot",
      SCREEN_MS,
    );
    expect(screen).toMatch(/^░+ {2}0\/3 videos · ETA learning$/m);
    expect(screen).toContain("this run: 0 done · 0 failed · 0 uncertain · 0 done before");
    expect(screen).toContain("waiting: 2 jobs for a slot, 1 of 1 generations in flight (--concurrency 1)");
    for (const line of screen.split("\n")) expect(line.length).toBeLessThan(80);

    await until(
      async () => /1\/3 videos · ETA/.test(await reel.screen()),
      "an ETA once a job ended",
      SCREEN_MS,
    );
    expect(await reel.exit).toBe(0);
    const end = await reel.screen();
    expect(end).toMatch(/^█{40} {2}3\/3 videos$/m);
    expect(end).toContain("this run: 3 done · 0 failed");
    expect(end).toContain("reel run: completed. 3 Success");
    // The block redrawn in place: one bar on screen at the end, no job lines or waits left behind.
    expect(end.match(/videos/g)).toHaveLength(1);
    expect(end).not.toContain("waiting");
    expect(end).not.toMatch(/spring\/\w+ +Running/);
  }, 20_000);

  it("watch: the display appears, a failure is printed above it in red, and each manifest's end is said", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await mkdir(join(dir, "incoming"));
    const reel = reelInPty(["watch", "incoming", "--settle", "200ms"], dir, {
      REEL_BASE_URL: s.baseUrl,
      REEL_API_KEY: s.apiKey,
    });
    await until(
      async () => {
        const screen = await reel.screen();
        return screen.includes("no videos yet") && screen.includes("watching incoming for *.yaml");
      },
      "the display, below the watcher's first line",
      SCREEN_MS,
    );
    await writeFile(join(dir, "incoming", "spring.yaml"), manifest("spring", ["a", "b"]));
    await writeFile(
      join(dir, "incoming", "r.yaml"),
      manifest("r", ["bad"], "\n        audio: { asset: 99999999 }"),
    );
    let screen = "";
    await until(
      async () => {
        screen = await reel.screen();
        return (
          screen.includes("spring: 2 Success") && screen.includes("r: 1 Fail") && /3\/3 videos/.test(screen)
        );
      },
      "a line per finished manifest",
      SCREEN_MS,
    );
    expect(screen).toMatch(/✗ failed r\/bad: .*99999999/);
    expect(screen).toMatch(/^█+ {2}3\/3 videos$/m);
    expect(screen).toContain("this session: 2 done · 1 failed");
    // Lasting lines above the live block, never inside it.
    const lines = screen.split("\n");
    const bar = lines.findIndex((l) => l.includes("3/3 videos"));
    expect(lines.findIndex((l) => l.includes("spring: 2 Success"))).toBeLessThan(bar);
    expect(reel.raw()).toContain("\x1b[31m✗ failed r/bad");
    reel.type("\x03");
    expect(await reel.exit).toBe(0);
    expect(await reel.screen()).toContain("reel watch: stopped.");
  }, 20_000);

  it("Ctrl-C: reel's line lands above the display, which leaves nothing of itself behind", async () => {
    const s = await sandbox({ timeScale: 0.5 });
    const dir = await tempDir();
    await writeTree(dir, { "spring.yaml": manifest("spring", ["intro", "outro"]) });
    const reel = reelInPty(["run", "--concurrency", "1", "spring.yaml"], dir, {
      REEL_BASE_URL: s.baseUrl,
      REEL_API_KEY: s.apiKey,
    });
    await until(async () => /spring\/\w+ +Running/.test(await reel.screen()), "a job running", SCREEN_MS);
    reel.type("\x03");
    expect(await reel.exit).toBe(130);
    const screen = await reel.screen();
    expect(screen).toMatch(/^reel: stopping; press Ctrl-C again to quit at once\.\n░+ {2}0\/2 videos$/m);
    expect(screen.match(/videos/g)).toHaveLength(1);
    expect(screen).toContain("reel run: interrupted.");
  }, 20_000);

  it("breaks no line in the middle of a word: the live display, the summary at the end, plan's output", async () => {
    // 0.5 s a task; a failure whose message and next step are longer than a line; a --state path
    // that makes the first line long.
    const s = await sandbox({ timeScale: 0.1, slots: 4 });
    const dir = await tempDir();
    await writeTree(dir, {
      "spring.yaml": manifest("spring", ["intro", "founder-message", "customer-story", "outro"]).concat(
        "  - id: teaser-with-a-rather-long-name-for-a-video\n    chunks:\n      - duration: 5\n        text: teaser\n        audio: { asset: 99999999 }\n",
      ),
      "prices.yaml": "version: 1\nvideo:\n  actor-2: 1234.5678\n",
    });
    const state = "spring-campaign-state-kept-here/state.db";
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
    const reel = reelInPty(["run", "--concurrency", "2", "--state", state, "spring.yaml"], dir, env);
    /** What the terminal wrapped, or the display cut, at any moment. */
    const cut = new Set<string>();
    const look = async (): Promise<string> => {
      const screen = await reel.screen();
      for (const row of await reel.wrapped()) cut.add(row);
      for (const line of screen.split("\n")) if (line.endsWith("…") || line.length > 79) cut.add(line);
      return screen;
    };
    let during = "";
    await until(
      async () => {
        const screen = await look();
        if (/^ {8}submitted \d+ · Pending \d+ · Running [12] · downloading \d+$/m.test(screen))
          during = screen;
        return during !== "";
      },
      "a task running",
      SCREEN_MS,
    );
    expect(await reel.exit).toBe(1);
    const end = await look();
    expect([...cut]).toEqual([]);
    // The long lines are there, whole, broken between words.
    expect(during).toMatch(/^jobs: {3}waiting \d+ · preparing \d+ · for a slot \d+$/m);
    expect(end).toMatch(
      /^reel run: state spring-campaign-state-kept-here\/state\.db .*\n.*given by --state$/m,
    );
    expect(end).toMatch(
      /^✗ failed spring\/teaser-with-a-rather-long-name-for-a-video: asset 99999999 .*\n {2}\S/m,
    );
    expect(end).toMatch(
      /^the service does not have or cannot use \(see the error\): a retry sends the same\nid and fails the same way\. Name the file itself in its place \(a path or an$/m,
    );

    const plan = reelInPty(["plan", "--state", state, "--retry-failed", "spring.yaml"], dir, env);
    expect(await plan.exit).toBe(0);
    const planned = await plan.screen();
    expect(await plan.wrapped()).toEqual([]);
    for (const line of planned.split("\n")) expect(line.length, line).toBeLessThan(80);
    expect(planned).toMatch(/^ {2}total +5 +0 +5 +20 +0 +6172\.84 +24691\.36$/m);
    expect(planned).toMatch(
      /^failed \(run --retry-failed to resubmit, up to --max-attempts attempts a job, 3\nby default\):$/m,
    );
  }, 20_000);

  it("NO_COLOR and --no-color leave the colours out", async () => {
    const s = await sandbox();
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
    for (const [argv, extra] of [
      [["run", "r.yaml", "--no-color"], {}],
      [["run", "r.yaml"], { NO_COLOR: "1" }],
    ] as const) {
      const dir = await tempDir();
      await writeTree(dir, { "r.yaml": manifest("r", ["bad"], "\n        audio: { asset: 99999999 }") });
      const reel = reelInPty([...argv], dir, { ...env, ...extra });
      expect(await reel.exit).toBe(1);
      expect(await reel.screen()).toMatch(/failed r\/bad/);
      // Neither red nor green anywhere in what was written.
      expect(reel.raw()).not.toContain("\x1b[31m");
      expect(reel.raw()).not.toContain("\x1b[32m");
    }
  }, 20_000);
});
